"""The one Markdown renderer of the HTML export and the web page: tables, lists and code come out
as such, citations link to their sources, and nothing a quoted page says becomes markup."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from deepresearch.reports.markdown_html import safe_link, to_html

SOURCES = "\n\n## Sources\n\n1. First filing\n2. Second filing\n"


class _Tree(HTMLParser):
    """Start tags with their attributes, the text inside each kind of element, and nesting errors."""

    VOID = frozenset({"br", "hr", "img"})

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text_in: dict[str, str] = {}
        self.errors: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)

    def handle_data(self, data: str) -> None:
        for tag in self.stack:
            self.text_in[tag] = self.text_in.get(tag, "") + data

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def test_a_table_keeps_its_header_rows_and_alignment_as_classes() -> None:
    page = to_html(
        "| Quarter | Net sales |\n| :--- | ---: |\n| Q1 2023 | 117,154 [1] |\n"
        "| Q2 2023 | 94,836 [2]\n" + SOURCES
    )
    tree = _Tree(page)
    assert tree.errors == [] and tree.stack == []
    assert [a.get("class") for a in tree.all("th")] == ["align-left", "align-right"]
    assert [a.get("class") for a in tree.all("td")] == ["align-left", "align-right"] * 2
    assert tree.text_in["thead"].split() == ["Quarter", "Net", "sales"]
    body = tree.text_in["tbody"]
    assert "Q1 2023" in body and "117,154" in body and "94,836" in body
    assert all("style" not in attrs for _, attrs in tree.tags)  # the page's CSP refuses style=
    assert "|" not in page


def test_nested_lists_nest() -> None:
    page = to_html("- Revenue\n  - Products\n    1. iPhone\n    2. Mac\n  - Services\n- Costs\n")
    tree = _Tree(page)
    assert tree.errors == []
    assert [tag for tag, _ in tree.tags] == ["ul", "li", "ul", "li", "ol", "li", "li", "li", "li"]


def test_fenced_code_stays_code_and_is_not_interpreted() -> None:
    page = to_html(
        "```python\n<script>alert(1)</script> **bold** [1] [x](https://a.example)\n| a | b |\n```"
        + SOURCES
    )
    tree = _Tree(page)
    assert [tag for tag, _ in tree.tags][:2] == ["pre", "code"]
    assert tree.all("code")[0].get("class") == "language-python"
    code = tree.text_in["code"]
    assert "<script>alert(1)</script> **bold** [1] [x](https://a.example)\n| a | b |" in code
    assert not tree.all("script") and not tree.all("strong") and not tree.all("table")
    assert [a.get("href") for a in tree.all("a")] == []  # not a citation, not a link
    assert tree.all("li")[0].get("id") == "source-1"  # the list after the fence still numbered


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<div onclick=alert(1)>x</div>",
    ],
)
def test_raw_html_is_text(text: str) -> None:
    page = to_html(f"Quoted: {text}\n\n{text}\n")
    tree = _Tree(page)
    assert [tag for tag, _ in tree.tags] == ["p", "p"]
    assert text in tree.text_in["p"]


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java&#x09;script:alert(1)",
        "&#106;avascript:alert(1)",
        "javascript%3Aalert(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:x",
        "file:///etc/passwd",
    ],
)
def test_unsafe_links_are_neutralized(url: str) -> None:
    page = to_html(f"[click]({url}) and <{url}> and ![pixel](https://tracker.example/p.png)\n")
    tree = _Tree(page)
    hrefs = [str(a.get("href")) for a in tree.all("a")]
    assert hrefs == ["https://tracker.example/p.png"]  # the image is a plain link, never loaded
    assert not tree.all("img")


def test_safe_links_keep_their_address() -> None:
    page = to_html(
        "[a](https://news.example/a?x=1&y=2) [b](http://b.example/) [c](#source-2) [d](docs/x.md)"
        " <https://c.example/p#:~:text=Net%20sales>\n"
    )
    hrefs = [a.get("href") for a in _Tree(page).all("a")]
    assert hrefs == [
        "https://news.example/a?x=1&y=2",
        "http://b.example/",
        "#source-2",
        "docs/x.md",
        "https://c.example/p#:~:text=Net%20sales",
    ]
    rels = [a.get("rel") for a in _Tree(page).all("a")]
    assert rels == ["noopener noreferrer"] * 2 + [None, None, "noopener noreferrer"]
    assert safe_link("//cdn.example/x") and not safe_link(" javascript:x")


def test_citations_link_to_the_sources_they_name() -> None:
    page = to_html(
        "# Report\n\nSales rose [1]. Both say so [1, 2]. Not a source [7]. Escaped \\[2]. "
        "In code `[1]`. A [link [2]](https://a.example).\n\n- Finding one [2]\n" + SOURCES
    )
    tree = _Tree(page)
    cites = [a for a in tree.all("a") if a.get("class") == "cite"]
    assert [a["href"] for a in cites] == [
        "#source-1",
        "#source-1",
        "#source-2",
        "#source-2",
    ]
    ids = [a["id"] for a in tree.all("li") if a.get("id")]
    assert ids == ["source-1", "source-2"]
    assert "Not a source [7]" in page and "Escaped [2]" in page  # left as text
    assert "<code>[1]</code>" in page
    assert page.count('class="cite"') == 4


def test_only_the_list_under_sources_gets_anchors() -> None:
    page = to_html("## Steps\n\n1. First [1]\n\n## Sources\n\n1. A\n\n## Other\n\n1. B\n")
    ids = [a.get("id") for a in _Tree(page).all("li")]
    assert ids == [None, "source-1", None]
