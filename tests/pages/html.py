"""A small reader of the page HTML for tests: form state, tables, embedded JSON, sources."""

import json
from collections import defaultdict
from html.parser import HTMLParser


class PageReader(HTMLParser):
    def __init__(self):
        super().__init__()
        self.selected: dict[str, list[str]] = defaultdict(list)  # select name -> chosen values
        self.checked: dict[str, list[str]] = defaultdict(list)  # checkbox name -> checked values
        self.inputs: dict[str, str] = {}  # text input name -> value
        self.tables: list[list[list[str]]] = []  # table -> body rows -> cell texts
        self.scripts: dict[str, str] = {}  # script id -> text
        self.sources: list[str] = []  # src of scripts, href of stylesheets
        self._select: str | None = None
        self._cell: list[str] | None = None
        self._in_body = False
        self._script_id: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "select":
            self._select = attributes["name"]
        elif tag == "option" and "selected" in attributes:
            self.selected[self._select].append(attributes["value"])
        elif tag == "input" and attributes.get("type") == "checkbox":
            if "checked" in attributes:
                self.checked[attributes["name"]].append(attributes["value"])
        elif tag == "input" and attributes.get("type") == "text":
            self.inputs[attributes["name"]] = attributes.get("value", "")
        elif tag == "table":
            self.tables.append([])
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.tables[-1].append([])
        elif tag == "td" and self._in_body:
            self._cell = []
        elif tag == "script":
            self._script_id = attributes.get("id")
            if "src" in attributes:
                self.sources.append(attributes["src"])
        elif tag == "link" and attributes.get("rel") == "stylesheet":
            self.sources.append(attributes["href"])

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "td" and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "script":
            self._script_id = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._script_id:
            self.scripts[self._script_id] = self.scripts.get(self._script_id, "") + data


def page_read(content: bytes) -> PageReader:
    reader = PageReader()
    reader.feed(content.decode())
    return reader


def page_data(reader: PageReader) -> dict:
    """The chart JSON the page embeds with json_script."""
    return json.loads(reader.scripts["inference-data"])
