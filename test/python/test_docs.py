"""The generated pages (docs/api.md, docs/frontends.md) match the code."""

import os

from dlc import docs

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def test_generated_pages_are_current():
    for name, page in docs.PAGES.items():
        with open(os.path.join(DOCS, name)) as f:
            assert f.read() == page(), f"docs/{name} is out of date: run python -m dlc.docs"
