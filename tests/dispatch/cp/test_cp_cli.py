"""Bad CP dispatcher parameters through the command line: one ``error:`` line, exit 2."""

from __future__ import annotations

import pytest

from test_cli import assert_user_error, run_cli, synthetic_swf


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return synthetic_swf(tmp_path_factory.mktemp("cp") / "t.swf", 50)


@pytest.mark.parametrize(("args", "needles"), [
    (["--dispatcher", "hcp-online:time_limit=0"], ["time_limit", "> 0"]),
    (["--dispatcher", "hcp", "-D", "max_time_limit=-1"], ["max_time_limit"]),
    (["--dispatcher", "pcp-online", "-D", "q_length=0"], ["q_length"]),
    (["--dispatcher", "hcp", "-D", "q_lenght=5"], ["no parameter 'q_lenght'",
                                                    "did you mean 'q_length'"]),
    (["--dispatcher", "pcp", "-D", "q_length=many"], ["must be an integer", "'many'"]),
    (["--dispatcher", "hcp", "-D", "model_order=random"], ["model_order"]),
    (["--dispatcher", "hcp-online", "-D", "time_mode=fast"], ["time mode", "fast"]),
    (["--dispatcher", "prb", "-D", "default_ewt=0"], ["default_ewt"]),
    (["--dispatcher", "prb:order=urgent"], ["unknown ordering 'urgent'",
                                            "did you mean 'urgency'"]),
])
def test_bad_cp_parameters(trace, args, needles) -> None:
    assert_user_error(run_cli("simulate", trace, *args), *needles)
