"""``fastomkl reproduce 004``: its sentences and verdicts against hand-made numbers, and a
``--quick`` run end to end on a small stand-in for a9a whose sentences agree with its own tables."""
import numpy as np
import pytest

from fastomkl.reproduce import paper004

TS = [4, 8, 16, 32, 64, 128]


def series(first: float, second: float) -> list:
    """Errors at TS with log-log slope ``first`` up to t = 16 and ``second`` after."""
    out = [16.0 ** -first * t ** first if t <= 16 else 16.0 ** -second * t ** second for t in TS]
    return [e * 0.5 for e in out]


@pytest.mark.parametrize("first, second, word", [(-0.5, -1.5, "steepens"),
                                                  (-1.06, -0.55, "flattens")])
def test_the_rate_sentence_says_what_the_slopes_do(first, second, word):
    summary = paper004.rate_summary(TS, series(first, second))
    (a, range_a), (b, range_b) = summary["halves"]
    assert (a, b) == pytest.approx((first, second))
    assert range_a == (4, 16) and range_b == (32, 128)
    text = paper004.rate_sentence(summary)
    assert f"the decay {word} with t" in text
    assert f"over t = 4..16 it is {first:.2f}" in text.lower()
    assert "t = 4..128" in text


def test_the_rate_halves_share_the_middle_of_an_odd_count():
    summary = paper004.rate_summary([1, 2, 4, 8, 16], [1.0, 0.5, 0.25, 0.2, 0.16], start=4)
    assert [r for _, r in summary["halves"]] == [(4, 8), (8, 16)]
    with pytest.raises(ValueError, match="three checkpoints"):
        paper004.rate_summary([4, 8], [1.0, 0.5])


def test_the_ranking_names_the_lowest_final_error():
    text = paper004.ranking_sentence({"DSG": (16.1, 0.2), "RBF": (14.8, 0.1),
                                      "Nys": (15.0, 0.3)})
    assert text.index("RBF 14.80") < text.index("Nys 15.00") < text.index("DSG 16.10")
    assert "RBF ends lowest, 0.20 points below the next" in text


def test_the_verdicts_within_traced_and_untraced():
    within = paper004.cell("c", 15.3, 0.0, (15.5, 0.2), {})
    assert within["verdict"] == "within" and within["bound"] == pytest.approx(0.4)
    traced = paper004.cell("c", 15.3, 0.0, (16.2, 0.2), {"--eta 4": (15.4, 0.1),
                                                          "--passes 2": (15.9, 0.1)})
    assert traced["verdict"] == "traced" and traced["traced_by"] == ["--eta 4"]
    assert "traced: with --eta 4 15.40" in paper004.verdict_sentence(traced)
    untraced = paper004.cell("c", 15.3, 0.5, (17.0, 0.2), {"--eta 4": (16.5, 0.1)})
    assert untraced["verdict"] == "untraced" and not untraced["within"]
    assert "outside and untraced (with --eta 4 16.50" in paper004.verdict_sentence(untraced)
    assert "no switch run" in paper004.verdict_sentence(
        paper004.cell("c", 15.3, 0.0, (17.0, 0.2), {}))
    # a row after more passes than the paper's one measures the gap and cannot trace the cell
    measured = paper004.cell("c", 15.3, 0.0, (16.2, 0.2), {"--passes 3": (15.4, 0.2)},
                             tracing=set())
    assert measured["switched"]["--passes 3"]["within"]
    assert measured["verdict"] == "untraced" and measured["traced_by"] == []
    assert "traces nothing" in "\n".join(paper004.comparison_lines([measured]))


def table_rows(text: str, heading: str) -> list:
    """The cells of the first Markdown table under ``heading``, without its header rows."""
    lines = text.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append([c.strip() for c in line.strip("|").split("|")])
    return block[2:]


def test_quick_run_writes_a_report_whose_sentences_agree_with_its_tables(tmp_path):
    rng = np.random.default_rng(0)
    X = (rng.uniform(size=(3500, 12)) < 0.3).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 0.5, 1.0, -1.0)
    Xt = (rng.uniform(size=(400, 12)) < 0.3).astype(float)
    np.savez(tmp_path / "a9a.npz", X=X, y=y, X_test=Xt,
             y_test=np.where(Xt[:, 0] + Xt[:, 1] > 0.5, 1.0, -1.0))
    out = tmp_path / "out"
    assert paper004.main(["--data", str(tmp_path), "--quick", "--eta", "4", "--quiet",
                          "--out", str(out)]) == 0
    text = (out / "paper004_results.md").read_text()
    assert "quick run" in text.splitlines()[0]
    assert "Command: `fastomkl reproduce 004 --data" in text and "at commit " in text
    for name in ("paper004_fig4_rate.png", "paper004_fig5_gp.png", "paper004_fig6_adult.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the rate sentence against the table's own numbers
    rate = table_rows(text, "## Section 7.1")
    summary = paper004.rate_summary([int(t) for t, _ in rate], [float(e) for _, e in rate])
    word = "steepens" if summary["halves"][1][0] < summary["halves"][0][0] else "flattens"
    assert f"the decay {word} with t" in text and f"**{summary['slope']:.2f}**" in text

    # the ranking against the Adult table's last row of each method
    finals = {}
    for method, _, _, error in table_rows(text, "## Section 7.3"):
        finals[method] = float(error)                 # one seed: the mean is the last value
    best = min(finals, key=finals.get)
    assert f"{best} ends lowest" in text
    assert set(finals) == {"DSG", "DSG (--eta 4)", "RBFSampler(2^8) + averaged SGD",
                           "Nystroem(2^8) + averaged SGD"}

    # the comparison table against the Adult table and its own spread test
    comparison = table_rows(text, "## Comparison with the paper")
    head, switched = comparison
    ours, diff, bound = (float(head[2].split("±")[0]), float(head[3]), float(head[4]))
    assert ours == finals["DSG"] and diff == pytest.approx(ours - 15.3, abs=0.011)
    assert (head[5] == "yes") == (abs(diff) <= bound)
    assert float(switched[2].split("±")[0]) == finals["DSG (--eta 4)"]
    verdict = ("within" if head[5] == "yes" else "outside, traced by `--eta 4`"
               if switched[5] == "yes" else "outside, untraced")
    assert head[6] == verdict

    # the GP sentences against the GP table
    gp = table_rows(text, "## Section 7.2")
    for scale in ("1 x median", "0.1 x median"):
        rows = [r for r in gp if r[0] == scale]
        assert f"goes from {rows[0][2]} after 1 pass to {rows[-1][2]}" in text


def test_rate_experiment_error_falls():
    """The averaged iterate's error to the generating function decreases over the iterations."""
    class Silent:
        def update(self, *_):
            pass
    rate = paper004.rate_experiment(True, Silent())
    assert rate["error"][-1] < 0.5 * rate["error"][0] and rate["summary"]["slope"] < 0
