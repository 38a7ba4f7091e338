"""Assembling and running one simulation: warnings about its set-up and outcome
(:mod:`~dispatchlab.run.advice`)."""
