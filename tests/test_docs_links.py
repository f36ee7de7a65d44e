"""Every relative link of README.md and docs/*.md resolves: the file (or folder) it names exists in
the repository, and an `#anchor` names a heading of the page it points to, as GitHub makes anchors
(lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` ... for a repeated heading). Links
inside code (fenced blocks, `spans`) are not links; addresses with a scheme (https:, mailto:) are
not checked."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^(```|~~~)")
SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: the rendered text (code spans' contents, links' text,
    no emphasis marks), lower case, everything but letters, digits, `_`, `-` and spaces dropped,
    spaces as hyphens."""
    text = SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("*", "")  # emphasis; `_` stays (between letters it is no emphasis: `a__b__c`)
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in _prose_lines(text):
        if m := HEADING.match(line):
            base = slug(m.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(text: str) -> list[tuple[int, str]]:
    out = []
    for n, line in _prose_lines(text):
        prose = SPAN.sub("", line)
        out += [(n, m.group(1)) for m in LINK.finditer(prose)]
    return out


def broken(page: Path, repo: Path = REPO) -> list[str]:
    """What is wrong with the page's relative links, one line each."""
    text = page.read_text()
    wrong = []
    for n, target in links(text):
        if SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(repo)}:{n}: {target}"
        if not dest.is_relative_to(repo):
            wrong.append(f"{where} points outside the repository")
        elif not dest.exists():
            wrong.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            wrong.append(f"{where}: no heading with that anchor in {dest.relative_to(repo)}")
    return wrong


def test_every_relative_link_of_readme_and_docs_resolves():
    wrong = [w for page in pages() for w in broken(page)]
    assert not wrong, "\n".join(wrong)


def test_the_pages_are_found_and_link_to_each_other():
    names = {p.name for p in pages()}
    assert {"README.md", "architecture.md", "operations.md", "api.md", "contract.md", "data-model.md",
            "desk.md", "console.md", "benchmarks.md"} <= names
    readme = {target.partition("#")[0] for _, target in links((REPO / "README.md").read_text())}
    assert {f"docs/{n}" for n in names - {"README.md"}} <= readme, "README's Docs list misses a page"


def test_slugs_are_githubs():
    assert slug("What `relay up` does") == "what-relay-up-does"
    assert slug("Past one machine: a FalkorDB cluster") == "past-one-machine-a-falkordb-cluster"
    assert slug("FalkorDB 4.16.3 and 4.22.1 side by side") == "falkordb-4163-and-4221-side-by-side"
    assert slug("The desk's conversation") == "the-desks-conversation"
    assert slug("Without Docker Hub: local stand-ins (`make images`)") == "without-docker-hub-local-stand-ins-make-images"
    assert slug("`recall_hybrid` **speed**") == "recall_hybrid-speed"
    assert slug("services__gateway__schemas__ConfirmBody") == "services__gateway__schemas__confirmbody"
    assert anchors("# A\n## B\n## B\n```\n## C\n```\n") == {"a", "b", "b-1"}


def test_a_broken_link_or_anchor_would_be_seen(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Real heading\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# Page\n\n"
        "[fine](docs/other.md#real-heading) [fine too](#page) [web](https://example.com/x)\n"
        "[gone](docs/missing.md) [no anchor](docs/other.md#nope) ![no image](docs/screens/x.png)\n"
        "[here, no anchor](#nowhere) [out](../../etc/passwd)\n"
        "`[in code](docs/missing.md)`\n"
        "```\n[in a block](docs/missing.md)\n```\n")
    wrong = broken(page, tmp_path)
    assert len(wrong) == 5, wrong
    assert [w.split(": ", 1)[1].split(":")[0] for w in wrong] == [
        "docs/missing.md", "docs/other.md#nope", "docs/screens/x.png", "#nowhere", "../../etc/passwd points outside the repository"]
