"""The Table 2 runner end to end on a short stream: the report, its saved results, regeneration."""
import json

import numpy as np

from fastomkl.cli import main


def test_reproduce_003_writes_report_and_results(tmp_path):
    out = tmp_path / "paper003_table2.md"
    code = main(["reproduce", "003", "--datasets", "AR(4)", "Airfoil", "--methods", "VAW²",
                 "VAW-EWA", "Raker", "--seeds", "0", "1", "--samples", "300", "--quiet",
                 "--no-figures", "--out", str(tmp_path)])
    assert code == 0
    text = out.read_text()
    assert "## AR(4)" in text and "## Airfoil" in text and "quick run" in text.splitlines()[0]
    saved = json.loads(out.with_suffix(".json").read_text())
    keys = set(saved["results"])
    assert keys == {f"{d}|{m}|{mode}" for d in ("AR(4)", "Airfoil")
                    for m, modes in (("VAW²", ("ridge", "vaw")), ("VAW-EWA", ("ridge", "vaw")),
                                     ("Raker", ("ridge",))) for mode in modes}
    for values in saved["results"].values():
        assert len(values) == 2 and np.isfinite(values).all() and min(values) > 0
    # the saved per-seed results regenerate the same report
    again = tmp_path / "again" / "paper003_table2.md"
    assert main(["reproduce", "003", "--report-only", str(out.with_suffix(".json")),
                 "--out", str(again.parent)]) == 0
    assert again.read_text() == text
