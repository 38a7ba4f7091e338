"""The report's per-partition table: shown for runs whose stored jobs have partitions,
absent when their jobs have none."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from campaign_helpers import write_campaign
from dispatchlab.experiment.campaign import run_campaign
from dispatchlab.report.html import write_report
from test_campaign_groups import NODE_AND_GPU_NODE
from test_sacct import EXPORT_2302
from test_sacct import write as write_sacct

DATA = Path(__file__).resolve().parents[1] / "data"


def test_report_shows_the_per_partition_table(tmp_path) -> None:
    trace = write_sacct(tmp_path, EXPORT_2302, "march.txt")
    platform = tmp_path / "n+g.toml"
    platform.write_text(NODE_AND_GPU_NODE)
    run_campaign(write_campaign(tmp_path, f"""
[campaign]
name = "groups"
database = "g.duckdb"
[[traces]]
label = "march"
path = "{trace}"
[[platforms]]
file = "{platform}"
[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"
"""), workers=1)
    page = write_report(tmp_path / "g.duckdb", tmp_path / "r").read_text()
    assert "<h3>By partition</h3>" in page
    section = page[page.index("<h3>By partition</h3>"):]
    section = section[:section.index("</table>")]
    # per configuration: batch (5 jobs, the larger node-hours) before gpu (1 job)
    for config in ("easy-walltime", "fifo-walltime"):
        row = (f'<td class="text">{config}</td><td class="text">batch</td>'
               '<td class="num">1</td><td class="num">5</td>')
        assert row in section, config
        assert (f'<td class="text">{config}</td><td class="text">gpu</td>'
                '<td class="num">1</td><td class="num">1</td>') in section
        assert section.index(row) < section.index(f'{config}</td><td class="text">gpu')
    assert "<th>node-hours</th>" in section
    # no table when the stored jobs have no partition: the schema-1 store's jobs were
    # stored before the jobs kept their groups
    db = tmp_path / "v1.duckdb"
    with gzip.open(DATA / "store-v1.duckdb.gz", "rb") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    page = write_report(db, tmp_path / "r", include_outdated=True).read_text()
    assert "By partition" not in page and "<h3>Job slowdown</h3>" in page
