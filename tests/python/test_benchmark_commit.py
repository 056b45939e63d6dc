"""python -m benchmarks labels a run with the commit of the fxmlir that ran
it: the checkout's where fxmlir runs from the checkout's sources, else the
commit an installed package was built from (setup.py's BUILD_COMMIT), with
the checkout's beside it where they differ: a package installed before the
checkout changed ran, not the checkout."""

from __future__ import annotations

import sys
from pathlib import Path

import fxmlir

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's benchmarks/

from benchmarks import report  # noqa: E402

CHECKOUT = Path(report.__file__).resolve().parents[1]


def test_the_checkouts_sources_are_labelled_with_the_checkout() -> None:
    assert report.commit(CHECKOUT / "python" / "fxmlir") == report._describe(CHECKOUT)


def test_an_installed_package_is_labelled_with_the_commit_it_was_built_from(tmp_path) -> None:
    here = report._describe(CHECKOUT)
    (tmp_path / "BUILD_COMMIT").write_text("0123abc\n")
    assert report.commit(tmp_path) == f"0123abc (installed package; checkout {here})"
    (tmp_path / "BUILD_COMMIT").write_text(here + "\n")
    assert report.commit(tmp_path) == here


def test_a_package_without_its_build_commit_is_unknown(tmp_path) -> None:
    assert report.commit(tmp_path).startswith("unknown (installed package; checkout ")


def test_the_imported_package_records_its_build_unless_it_is_the_checkout() -> None:
    package = Path(fxmlir.__file__).resolve().parent
    if package != CHECKOUT / "python" / "fxmlir":
        assert (package / "BUILD_COMMIT").read_text().strip()
    assert report.commit() == report.commit(package)
