"""CP-SAT dispatchers (``hcp``, ``hcp-online``; ``pcp``, ``pcp-online`` in :mod:`.pcp`).

This package imports ``ortools``; ``import dispatchlab.dispatch`` does not import it
(the registry loads these classes lazily). Shared machinery is in :mod:`.common`.
"""
