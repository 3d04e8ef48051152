"""MkDocs hook: the coverage page is generated as the site builds (``python -m numloom
coverage --markdown`` for the NumPy installed), so the site never shows a stale table."""

from __future__ import annotations


def on_page_markdown(markdown, page, **kwargs):
    if page.file.src_uri != "COVERAGE.md":
        return markdown
    from numloom.tools import coverage

    return coverage.markdown(coverage.rows())
