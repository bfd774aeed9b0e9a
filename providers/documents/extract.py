"""Text out of PDF, HTML, Markdown and plain-text files (office formats: ``extract_office``),
run in a killable process pool.

PDF parsing is CPU-heavy and a hostile file can hang or balloon the parser, so extraction never
runs in an async actor's event loop: ``ExtractionPool`` sends each file to a worker process with an
address-space limit and a per-file deadline, and replaces the workers when one overruns or dies.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import multiprocessing
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from deepresearch.errors import ExtractionError
from deepresearch.providers.documents.extracted_doc import ExtractedDoc, html_doc

PDF_SUFFIXES = frozenset({".pdf"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
TEXT_SUFFIXES = frozenset({".md", ".txt"})
# office formats, extracted by ``extract_office`` (suffix -> kind; the kind is also a fetched kind)
OFFICE_SUFFIXES = {f".{kind}": kind for kind in ("docx", "pptx", "xlsx", "csv", "epub")}
SUPPORTED_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | TEXT_SUFFIXES | frozenset(OFFICE_SUFFIXES)
# kinds with several addressable pages, and what a page is called in a citation's location
PAGE_LABELS = {"pdf": "p.", "pptx": "slide", "xlsx": "sheet", "epub": "section"}


def kind_of(path: Path) -> str:
    """The extraction kind of a supported file: pdf, html, text or an office kind."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return "pdf"
    return "html" if suffix in HTML_SUFFIXES else OFFICE_SUFFIXES.get(suffix, "text")


def extract_path(path: Path) -> ExtractedDoc:
    """Extract ``path`` in this process; every failure becomes ``ExtractionError``."""
    suffix = path.suffix.lower()
    if path.exists() and not path.is_file():  # stat only: opening a FIFO or device would block
        raise ExtractionError(str(path), "not a regular file")
    try:
        if suffix in OFFICE_SUFFIXES:
            from deepresearch.providers.documents.extract_office import extract_office

            return extract_office(path, OFFICE_SUFFIXES[suffix], path.name)
        if suffix in PDF_SUFFIXES:
            return _extract_pdf(path, path.name)
        if suffix in HTML_SUFFIXES:
            return _extract_html(path)
        if suffix in TEXT_SUFFIXES:
            raw = path.read_text("utf-8", errors="replace")
            text = markdown_text(raw) if suffix == ".md" else plain_text(raw)
            kind = "text/markdown" if suffix == ".md" else "text/plain"
            return ExtractedDoc(title=path.name, pages=(text,), content_type=kind)
    except ExtractionError:
        raise
    except MemoryError:
        raise ExtractionError(str(path), "over the memory limit") from None
    except OSError as exc:
        raise ExtractionError(str(path), f"cannot read ({exc.strerror or exc})") from None
    except Exception as exc:  # parsers raise anything on hostile input
        raise ExtractionError(str(path), f"{type(exc).__name__}: {exc}"[:300]) from None
    raise ExtractionError(str(path), f"unsupported file type {suffix or '(none)'}")


def plain_text(text: str) -> str:
    """A text or Markdown file's text, its pipe tables as self-describing rows (as an HTML or
    office document's): a body row alone ("| Net revenue | 1,234 | 1,100 |") names no column."""
    from deepresearch.text.artefacts import drop_soft_hyphens
    from deepresearch.text.grid_tables import rows_from_pipes

    return rows_from_pipes(drop_soft_hyphens(text.replace("\r\n", "\n")))


def markdown_text(text: str) -> str:
    """A Markdown file's text as read (``artefacts.clean_markdown``), its pipe tables as rows;
    a fenced code block stays code: its ``|`` lines are no table."""
    from deepresearch.text.artefacts import clean_markdown
    from deepresearch.text.grid_tables import rows_from_pipes

    return clean_markdown(text.replace("\r\n", "\n"), rows_from_pipes)


def _extract_pdf(source: Path | bytes, name: str) -> ExtractedDoc:
    import pypdfium2 as pdfium

    from deepresearch.text.artefacts import clean_pdf_pages
    from deepresearch.text.bridges import rows_from_bridges
    from deepresearch.text.pdf_tables import DocumentTables

    try:
        pdf = pdfium.PdfDocument(source)
    except pdfium.PdfiumError as exc:
        raise ExtractionError(
            str(source) if isinstance(source, Path) else name, f"not a readable PDF ({exc})"
        ) from None
    pages: list[str] = []
    tables = DocumentTables()  # a table continued on the next page keeps its headers
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            pages.append(rows_from_bridges(tables.page_text(textpage)))
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return ExtractedDoc(title=name, pages=clean_pdf_pages(pages), content_type="application/pdf")


def _extract_html(path: Path) -> ExtractedDoc:
    return html_doc(path.read_text("utf-8", errors="replace"), path.name)


def extract_bytes(data: bytes, kind: str, name: str, charset: str | None = None) -> ExtractedDoc:
    """Extract an in-memory document (a fetched page); ``kind`` is ``html``, ``pdf``, ``text`` or
    an office kind (``docx``, ``pptx``, ``xlsx``, ``csv``, ``epub``).

    ``charset`` is the declared one; HTML without it uses its ``<meta charset>``, else UTF-8.
    """
    try:
        if kind == "pdf":
            return _extract_pdf(data, name)
        if kind in OFFICE_SUFFIXES.values():
            from deepresearch.providers.documents.extract_office import extract_office

            return extract_office(data, kind, name, charset)
        charset = charset or (_meta_charset(data[:4096]) if kind == "html" else None)
        try:
            text = data.decode(charset or "utf-8", errors="replace")
        except LookupError:  # unknown charset name
            text = data.decode("utf-8", errors="replace")
        if kind == "html":
            return html_doc(text, name)
        if kind == "text":
            return ExtractedDoc(name, (plain_text(text),), "text/plain")
    except ExtractionError:
        raise
    except MemoryError:
        raise ExtractionError(name, "over the memory limit") from None
    except Exception as exc:  # parsers raise anything on hostile input
        raise ExtractionError(name, f"{type(exc).__name__}: {exc}"[:300]) from None
    raise ExtractionError(name, f"unsupported kind {kind}")


_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _meta_charset(head: bytes) -> str | None:
    match = _META_CHARSET_RE.search(head)
    return match.group(1).decode("ascii").lower() if match else None


def _ready() -> bool:
    return True


def _limit_memory(memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


Job = Callable[[Path], ExtractedDoc]
_STARTUP_S = 60.0
Outcome = ExtractedDoc | ExtractionError


class ExtractionPool:
    """Worker processes (forkserver: safe under a threaded Ray worker) with a per-file deadline.

    A file that overruns its deadline is reported as timed out, the workers are killed and replaced,
    and the other files that were in flight are run again. After a worker crash the files that were
    in flight are retried one at a time, so a crash is blamed on the file that caused it.
    """

    def __init__(
        self, workers: int, timeout_s: float, memory_mb: int, *, job: Job = extract_path
    ) -> None:
        self.workers = max(1, workers)
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._job = job
        self._lock = threading.Lock()
        self._generation = 0
        self._executor: cf.ProcessPoolExecutor | None = None

    def __enter__(self) -> ExtractionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is None:
            return
        processes: dict[int, Any] = dict(getattr(executor, "_processes", None) or {})
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():  # idle workers exit at once; a stuck one is killed
            process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)

    # ------------------------------------------------------------------ pool management

    def _pool(self) -> tuple[cf.ProcessPoolExecutor, int]:
        with self._lock:
            if self._executor is None:
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload([__name__, "pypdfium2"])
                self._executor = cf.ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=ctx,
                    initializer=_limit_memory,
                    initargs=(self.memory_mb,),
                )
                # start every worker now, so a file's deadline never includes a worker's start-up
                ready = [self._executor.submit(_ready) for _ in range(self.workers)]
                cf.wait(ready, timeout=_STARTUP_S)
            return self._executor, self._generation

    def _reset(self, generation: int) -> None:
        """Kill the workers of ``generation`` if still current; the next call starts new ones."""
        with self._lock:
            if generation != self._generation or self._executor is None:
                return
            executor, self._executor = self._executor, None
            self._generation += 1
        processes: dict[int, Any] = dict(getattr(executor, "_processes", None) or {})
        for process in processes.values():
            process.kill()
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():
            process.join(timeout=5)

    def _submit(self, path: Path) -> tuple[cf.Future[ExtractedDoc], int]:
        return self._submit_call(self._job, path)

    def _submit_call(
        self, fn: Callable[..., ExtractedDoc], *args: Any
    ) -> tuple[cf.Future[ExtractedDoc], int]:
        executor, generation = self._pool()
        try:
            return executor.submit(fn, *args), generation
        except (BrokenProcessPool, RuntimeError):
            self._reset(generation)
            executor, generation = self._pool()
            return executor.submit(fn, *args), generation

    # ------------------------------------------------------------------ batch

    def extract_many(self, paths: Sequence[Path]) -> dict[Path, Outcome]:
        """Extract every path, ``workers`` at a time (largest first), each under the deadline."""
        results: dict[Path, Outcome] = {}
        queue: deque[Path] = deque(sorted(set(paths), key=_size, reverse=True))
        suspects: set[Path] = set()
        inflight: dict[cf.Future[ExtractedDoc], tuple[Path, float, int]] = {}
        while queue or inflight:
            while queue and len(inflight) < self.workers:
                head = queue[0]
                alone = head in suspects or any(p in suspects for p, _, _ in inflight.values())
                if alone and inflight:
                    break
                queue.popleft()
                future, generation = self._submit(head)
                inflight[future] = (head, time.monotonic() + self.timeout_s, generation)
            nearest = min(deadline for _, deadline, _ in inflight.values())
            done, _ = cf.wait(
                inflight,
                timeout=max(0.0, nearest - time.monotonic()),
                return_when="FIRST_COMPLETED",
            )
            broken: list[Path] = []
            for future in done:
                path, _, generation = inflight.pop(future)
                try:
                    results[path] = future.result()
                except ExtractionError as exc:
                    results[path] = exc
                except BrokenProcessPool:
                    broken.append(path)
                    self._reset(generation)
                except Exception as exc:
                    results[path] = ExtractionError(str(path), f"{type(exc).__name__}: {exc}")
            for path in broken:
                if path in suspects:
                    results[path] = ExtractionError(str(path), "extraction worker crashed")
                else:
                    suspects.add(path)
                    queue.appendleft(path)
            now = time.monotonic()
            expired = [f for f, (_, deadline, _) in inflight.items() if deadline <= now]
            if expired:
                for future in expired:
                    path, _, generation = inflight.pop(future)
                    results[path] = self._timed_out(path)
                    self._reset(generation)
                for future, (path, _, _) in list(inflight.items()):  # innocent bystanders
                    del inflight[future]
                    queue.appendleft(path)
        return results

    def _timed_out(self, path: Path | str) -> ExtractionError:
        return ExtractionError(str(path), f"timed out after {self.timeout_s:g}s")

    # ------------------------------------------------------------------ one file, async

    async def extract(self, path: Path) -> ExtractedDoc:
        """Extract one file without blocking the event loop; raises ``ExtractionError``."""
        return await self._run_one(str(path), self._job, path)

    async def extract_data(
        self, data: bytes, kind: str, name: str, charset: str | None = None
    ) -> ExtractedDoc:
        """``extract_bytes`` in a worker, under the same deadline and memory limit as files."""
        return await self._run_one(name, extract_bytes, data, kind, name, charset)

    async def _run_one(
        self, label: str, fn: Callable[..., ExtractedDoc], *args: Any
    ) -> ExtractedDoc:
        for attempt in range(2):
            # in a thread: the first call starts the workers, which must not stall the event loop
            future, generation = await asyncio.to_thread(self._submit_call, fn, *args)
            try:
                return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout_s)
            except TimeoutError:
                self._reset(generation)
                raise self._timed_out(label) from None
            except BrokenProcessPool:
                deliberate = generation != self._generation
                self._reset(generation)
                if deliberate and attempt == 0:
                    continue  # another call's timeout killed our worker: not this file's fault
                raise ExtractionError(label, "extraction worker crashed") from None
            except ExtractionError:
                raise
            except Exception as exc:
                raise ExtractionError(label, f"{type(exc).__name__}: {exc}") from None
        raise ExtractionError(label, "extraction worker crashed")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
