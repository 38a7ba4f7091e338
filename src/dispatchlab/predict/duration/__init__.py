"""Job duration predictors: the protocol (:mod:`~dispatchlab.predict.duration.base`), the
predictors (history, Tsafrir, machine-learned, safety margins) and their evaluation
(:mod:`~dispatchlab.experiment.duration_accuracy`). :mod:`dispatchlab.predict` re-exports
the public names."""
