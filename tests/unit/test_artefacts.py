"""Documents of every kind read as printed: hyphens, running matter, anchors and link syntax out;
definition terms kept with their descriptions; code left as code (``text.artefacts``)."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import write_pdf

from deepresearch.providers.documents.extract import extract_bytes, extract_path
from deepresearch.text.artefacts import mend_hyphens


def test_a_pdf_word_broken_at_a_line_end_is_whole_and_a_compound_keeps_its_hyphen(
    tmp_path: Path,
) -> None:
    """PDFium reads "op-" / "tion" as one word with a U+FFFE hyphen; the document's own words
    tell a broken word ("option" is used elsewhere) from a compound ("stock" and "based" are)."""
    lines = [
        "Each option is listed. Options based on stock are granted.",
        "Unless the -s op-",
        "tion is specified, a dis-",
        "connect is reported. Our stock-",
        "based pay grew, we disconnect.",
    ]
    text = extract_path(write_pdf(tmp_path / "a.pdf", [lines])).pages[0]
    assert "the -s option is specified" in text, text
    assert "a disconnect is reported" in text, text
    assert "stock-based pay" in text, text
    assert "\ufffe" not in text and "\u00ad" not in text


def test_a_word_printed_broken_across_two_lines_joins_when_the_document_uses_it() -> None:
    pages = ("We may dis-\nconnect the link.\nA long-\nterm plan; the term is long.", "disconnect")
    assert (
        mend_hyphens(pages)[0]
        == "We may disconnect\nthe link.\nA long-\nterm plan; the term is long."
    )


def test_soft_hyphens_vanish_from_markdown_text_and_html(tmp_path: Path) -> None:
    for name in ("a.md", "a.txt"):
        (tmp_path / name).write_text("Re\u00adconnect the cable and re\u00adstart it.\n")
        assert "Reconnect the cable and restart it." in extract_path(tmp_path / name).pages[0]
    page = "<html><body><article><p>" + "Re\u00adconnect the cable and re&shy;start. " * 4
    text = extract_bytes((page + "</p></article></body></html>").encode(), "html", "a.html")
    assert "Reconnect the cable and restart." in text.pages[0]


def _man_page(tmp_path: Path) -> Path:
    head, pages = "TAR(1) General Commands Manual TAR(1)", []
    bodies = [
        ["NAME", "tar - an archiving utility", "OPTIONS", "-C, --directory=DIR"],
        ["Change to DIR before performing any operations.", "-f, --file=ARCHIVE"],
        ["Use archive file or device ARCHIVE.", "--help display this help and exit"],
    ]
    for n, body in enumerate(bodies, 1):
        last = f"The {('first', 'second', 'third')[n - 1]} archive is written to the end of the"
        pages.append([head, *body, last, f"GNU tar 1.34 2023-02-0{n} {n}"])
    pages[1].append("2")  # a page number printed alone under the foot
    return write_pdf(tmp_path / "tar.pdf", pages)


def test_a_man_page_pdf_loses_its_running_feet_and_page_numbers(tmp_path: Path) -> None:
    """A foot is read into the sentence a page leaves open; the head stays on every page: it
    sits above the text and names the document, which search weighs documents by."""
    doc = extract_path(_man_page(tmp_path))
    for page in doc.pages:
        assert page.startswith("TAR(1) General Commands Manual TAR(1)"), page
        assert "GNU tar 1.34" not in page and not page.rstrip().endswith("2"), page
        assert page.rstrip().endswith("is written to the end of the"), page


def test_an_option_printed_above_its_description_stays_with_it(tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "cut.pdf",
        [
            [
                "OPTIONS",
                "-b, --bytes=LIST",
                "select only these bytes",
                "-U NUM, --unified[=NUM]",
                "output NUM (default 3) lines of unified context",
                "--help display this help and exit",
                "--version",
                "-f",
                "- a bullet, not an option",
            ]
        ],
    )
    lines = extract_path(pdf).pages[0].split("\n")
    assert "-b, --bytes=LIST select only these bytes" in lines
    assert "-U NUM, --unified[=NUM] output NUM (default 3) lines of unified context" in lines
    assert "--help display this help and exit" in lines
    assert "--version" in lines and "-f" in lines  # no description under them


MARKDOWN = """---
title: "rm"
description: "The rm command"
---

# rm

Use the [`docker container prune`](container_prune.md) command, see
![diagram](img/a.png) and [the guide][guide] &mdash; or <https://example.org/x>.

### <a name="force"></a> Force-remove a container (--force) {#force}

```console
| NAME | STATUS |
| web  | up     |
$ docker rm [x](y) &amp;
```

--volumes
: Remove anonymous volumes associated with the container

| Option | Default |
|--------|---------|
| --tail | all     |

[guide]: https://example.org/guide
"""


def test_markdown_reads_as_rendered_and_its_code_stays_code(tmp_path: Path) -> None:
    (tmp_path / "rm.md").write_text(MARKDOWN)
    text = extract_path(tmp_path / "rm.md").pages[0]
    assert "title:" not in text  # front matter
    assert (
        "Use the `docker container prune` command, see\ndiagram and the guide — or https://example.org/x."
        in text
    )
    assert "### Force-remove a container (--force)" in text.replace("###  ", "### ")
    assert "<a name" not in text and "{#force}" not in text and "[guide]:" not in text
    assert (
        "| NAME | STATUS |\n| web  | up     |\n$ docker rm [x](y) &amp;" in text
    )  # code as written
    assert "--volumes: Remove anonymous volumes associated with the container" in text
    assert "Option: --tail" in text or "--tail" in text.split("```")[-1]  # a table out of code
    assert "NAME: web" not in text


HTML = """<!doctype html><html><head><title>Control files</title></head><body><main>
<h1>5. Control files and their fields<a class="headerlink" href="#c" title="Permalink to this
heading">¶</a></h1>
<p>The package management system manipulates data represented in a common
format, known as control data.<a class="footnote-reference brackets" href="#f1" id="r1">1</a></p>
<p>There are three types of fields, and each stanza of a control file holds fields of them:</p>
<dl class="simple">
<dt>simple</dt><dd><p>The field, including its value, must be a single line.</p></dd>
<dt><code>folded</code></dt><dd><p>The value of a folded field is a logical line that may
span several lines.</p></dd>
</dl>
<pre>Package: libc6
Depends: foo</pre>
<h2>5.1. Syntax<a class="headerlink" href="#s">¶</a></h2>
<p>A control file consists of one or more stanzas of fields, separated by empty lines.</p>
</main></body></html>"""


def test_html_loses_its_anchors_and_keeps_each_term_with_its_description() -> None:
    untitled = extract_bytes(HTML.replace("<title>Control files</title>", "").encode(), "html", "c")
    assert untitled.title == "5. Control files and their fields"  # its heading, no anchor mark
    text = extract_bytes(HTML.encode(), "html", "c.html").pages[0]
    assert "¶" not in text and "Permalink" not in text
    assert "5. Control files and their fields" in text.split("\n")
    assert "represented in a common format, known as control data." in text  # one paragraph
    assert "control data.1" not in text and "control data. 1" not in text  # footnote mark
    assert "simple: The field, including its value, must be a single line." in text
    assert (
        "folded: The value of a folded field is a logical line that may span several lines." in text
    )
    assert "Package: libc6\nDepends: foo" in text  # preformatted text as written
