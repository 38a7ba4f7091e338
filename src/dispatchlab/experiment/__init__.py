"""Experiments over many runs: campaigns (:mod:`~dispatchlab.experiment.campaign`), the
``compare`` and ``study`` drivers, statistics (:mod:`~dispatchlab.experiment.statistics`),
provenance of results (:mod:`~dispatchlab.experiment.provenance`) and learning-to-rank
training (:mod:`~dispatchlab.experiment.l2r`)."""
