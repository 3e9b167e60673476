"""Figures a reader can read: small groups drawn as points, the paper's value beside ours, method-demonstration
warnings inside the image, and PDFs whose bytes depend only on the figure."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")


def test_a_saved_figure_s_pdf_has_the_same_bytes_every_time(tmp_path, monkeypatch):
    """No creation date in the PDF: two saves of one figure (a second apart, as two runs are) are byte-identical."""
    import time

    import matplotlib.pyplot as plt

    from nli_lib.outputs import Outputs

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1])
    ax.set_title("n = 0 · μ → ours")
    saved = []
    for i in range(2):
        out = Outputs(f"00_x{i}", params={"quick": False}, tier="offline", seed=0)
        png = out.figure(fig, "f", ref="companion-fig-1", caption="a figure")
        saved.append(png.with_suffix(".pdf").read_bytes())
        if not i:
            time.sleep(1.1)  # matplotlib's creation date has one-second resolution
    plt.close(fig)
    assert b"CreationDate" not in saved[0]
    assert saved[0] == saved[1]
