"""Text as the app shows it, without Plotly (lessons, stories and questions import it without the
figures): Markdown written by others as plain text, text shown literally, previews and lengths."""
from __future__ import annotations

import re


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&=^\"'/])")
_AUTOLINK = re.compile(r"(?i)(://|\bwww\.|@)")  # what GFM turns into a link: URLs, www. hosts, e-mail addresses
JOINER = "\u2060"  # WORD JOINER: invisible, and no autolink survives it


# what model.summarizer.CONTROL blanks in a document (control characters, bidi overrides and
# isolates), blanked too in any other text a message shows (a link's parameters)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def markdown_text(text: str) -> str:
    """Text as Streamlit shows it literally in a widget label or option, a caption, a message:
    every Markdown, LaTeX and colour-directive character backslash-escaped (CommonMark escapes any
    ASCII punctuation), and an invisible word joiner inside "://", "www." and "@", which Streamlit
    would otherwise turn into live links even when escaped. Control and bidi characters are blanked."""
    text = _AUTOLINK.sub(lambda m: m[0][:1] + JOINER + m[0][1:], CONTROL.sub(" ", str(text)))
    return _MARKDOWN.sub(r"\\\1", text)


def plain_text(markdown: str) -> str:
    """Markdown written by someone else (a lesson, a story) as the plain text a reader sees, to be
    shown as text (``markdown_text``), so nothing in it is fetched or run whatever its syntax: parsed
    by a real CommonMark parser (markdown-it-py, which Streamlit installs), emphasis and code marks
    dropped, a link as its words and address, an image in any form (``![a [b] c](url)``,
    ``![x\\]y](url)``, a reference ``![t]`` with ``[t]: url``) as its alt text ("[image: …]"), raw
    HTML as the characters it is. Paragraphs and list items are apart by a blank line. Control and
    bidi characters are blanked first, as in a document."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(CONTROL.sub(" ", str(markdown)))
    out, lists, item = [], [], False  # item: a list item's marker waits for its first line

    def inline(children) -> str:
        parts, links = [], []  # links: (where its words start, its address)
        for t in children or ():
            if t.type in ("text", "code_inline", "html_inline"):
                parts.append(t.content)
            elif t.type in ("softbreak", "hardbreak"):
                parts.append("\n")
            elif t.type == "link_open":
                links.append((len(parts), str(t.attrs.get("href", ""))))
            elif t.type == "link_close" and links:
                start, address = links.pop()
                if address and "".join(parts[start:]) not in (address, address.removeprefix("mailto:")):
                    parts.append(f" ({address})")  # (an autolink's words are its address already)
            elif t.type == "image":
                alt = "".join(c.content for c in t.children or ()).strip()
                parts.append(f"[image: {alt}]" if alt else "[image]")
        return "".join(parts)

    for t in tokens:
        if t.type in ("bullet_list_open", "ordered_list_open"):
            lists.append(int(t.attrs.get("start", 1)) if t.type == "ordered_list_open" else None)
        elif t.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif t.type == "list_item_open":
            n = lists[-1]
            out.append("  " * (len(lists) - 1) + ("- " if n is None else f"{n}. "))
            if n is not None:
                lists[-1] = n + 1
            item = True
        elif t.type == "inline":
            if item:
                out[-1] += inline(t.children)
            else:
                out.append(inline(t.children))
            item = False
        elif t.type in ("fence", "code_block", "html_block"):
            out.append(t.content.rstrip("\n"))
        elif t.type == "hr":
            out.append("---")
    return "\n\n".join(out).strip()  # (a blank line: blocks stay apart where the text is shown as Markdown)


def plural(n: int, noun: str) -> str:
    """"1 word", "2 words", "1,200 words"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")  # kana, Han, Hangul: no spaces between words


def length_label(text: str) -> str:
    """"143 words"; for text written without spaces between words (Chinese, Japanese), where
    a space count says "1 word", its characters: "212 characters"."""
    cjk = len(CJK.findall(text))
    if cjk and cjk >= len(text.split()):
        return plural(len("".join(text.split())), "character")
    return plural(len(text.split()), "word")


def preview(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
