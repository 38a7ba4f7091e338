"""Experiment campaigns: many simulations from one TOML file, on a local process pool
or a Dask cluster, stored in an embedded DuckDB database (see the README's
"Campaigns" section for the file format).

- :func:`load_campaign` reads and validates a campaign file into run specs;
- :func:`run_campaign` executes the unfinished runs and stores their results;
- :func:`campaign_status` counts done / failed / pending runs;
- :mod:`dispatchlab.campaign.store` is the database layout.
"""

from dispatchlab.campaign.config import Campaign, load_campaign, run_key
from dispatchlab.campaign.runner import (
    CampaignReport,
    CampaignStatus,
    DaskBackend,
    LocalPool,
    campaign_status,
    run_campaign,
)

__all__ = [
    "Campaign",
    "CampaignReport",
    "CampaignStatus",
    "DaskBackend",
    "LocalPool",
    "campaign_status",
    "load_campaign",
    "run_campaign",
    "run_key",
]
