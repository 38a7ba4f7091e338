"""Job duration predictors: the protocol (:mod:`~dispatchlab.predict.duration.base`), the
predictors (history, Tsafrir, machine-learned, safety margins) and their evaluation
(:mod:`~dispatchlab.predict.duration.evaluate`). :mod:`dispatchlab.predict` re-exports
the public names."""
