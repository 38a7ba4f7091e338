"""The kernel every other package builds on (layer 0; imports nothing else of dispatchlab):
errors (:mod:`~dispatchlab.core.errors`), did-you-mean suggestions
(:mod:`~dispatchlab.core.suggest`), the parameter mixin of components
(:mod:`~dispatchlab.core.params`), the registry every component kind is listed in
(:mod:`~dispatchlab.core.registry`), the component grammar
(:mod:`~dispatchlab.core.components`), the time limit of every reader
(:mod:`~dispatchlab.core.limits`), the papers and data sources
(:mod:`~dispatchlab.core.references`), memory trimming (:mod:`~dispatchlab.core.memory`)
and the shims of moved names (:mod:`~dispatchlab.core.deprecation`)."""
