"""Experiment campaigns: many simulations from one TOML file, on a local process pool
or a Dask cluster, stored in an embedded DuckDB database (the file format:
docs/reference/campaigns.md).

- :func:`load_campaign` reads and validates a campaign file into run specs (their keys
  cover configuration, input files and code: :mod:`dispatchlab.experiment.provenance`);
- :func:`run_campaign` executes the unfinished (or requested) runs and stores them;
- :func:`campaign_status` counts done / failed / pending / outdated runs;
- :func:`select_runs` reads stored runs, leaving out those made by other code;
- :func:`group_runs` groups them into configurations without silent pooling;
- :mod:`dispatchlab.experiment.campaign.store` is the database layout.
"""

from dispatchlab.experiment.campaign.config import Campaign, config_key, load_campaign, run_key
from dispatchlab.experiment.campaign.groups import Group, group_runs
from dispatchlab.experiment.campaign.runner import (
    CampaignInterrupted,
    CampaignReport,
    CampaignStatus,
    DaskBackend,
    LocalPool,
    campaign_status,
    run_campaign,
)
from dispatchlab.experiment.campaign.store import select_runs

__all__ = [
    "Campaign",
    "CampaignInterrupted",
    "CampaignReport",
    "CampaignStatus",
    "DaskBackend",
    "Group",
    "LocalPool",
    "campaign_status",
    "config_key",
    "group_runs",
    "load_campaign",
    "run_campaign",
    "run_key",
    "select_runs",
]
