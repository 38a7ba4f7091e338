"""Power-capped and throttling dispatchers: EASY+PC and the knapsack of Carastan-Santos et al.
2024 (:mod:`~dispatchlab.dispatch.powercap.capped`), PA-HPC-SIM's power-budget EASY
variants (:mod:`~dispatchlab.dispatch.powercap.budget`), the list scheduler LS
(:mod:`~dispatchlab.dispatch.powercap.ls`) and RAPL-like throttling
(:mod:`~dispatchlab.dispatch.powercap.rapl`) of Borghesi et al. 2018. The CP-based ones
are :mod:`dispatchlab.dispatch.cp`."""
