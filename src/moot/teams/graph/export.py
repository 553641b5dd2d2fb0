"""The graph as a file: JSON, GraphML (opens in Gephi, yEd and networkx) or Mermaid, by extension."""

from __future__ import annotations

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.files import write_text_atomic
from moot.teams.graph.scaffold import EntityNode, PlaceholderNode, Scaffold

FORMATS = {".json": "json", ".graphml": "graphml", ".mmd": "mermaid"}

_NODE_KEYS = (("kind", "string"), ("label", "string"), ("confidence", "double"), ("why_relevant", "string"),
              ("description", "string"), ("evidence", "string"))
_EDGE_KEYS = (("type", "string"), ("strength", "double"), ("provisional", "boolean"), ("evidence", "string"))


def _quotes(evidence: list[Any]) -> str:
    return " | ".join(f"{e.source}: {e.quote}" for e in evidence)


def to_graphml(scaffold: Scaffold) -> str:
    """GraphML with typed attributes (label, kind, confidence; type, strength, provisional)."""
    root = ET.Element("graphml", xmlns="http://graphml.graphdrawing.org/xmlns")
    for name, kind in _NODE_KEYS:
        ET.SubElement(root, "key", {"id": f"n_{name}", "for": "node", "attr.name": name, "attr.type": kind})
    for name, kind in _EDGE_KEYS:
        ET.SubElement(root, "key", {"id": f"e_{name}", "for": "edge", "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", id="G", edgedefault="directed")
    for node in scaffold.nodes.values():
        el = ET.SubElement(graph, "node", id=node.id)
        values = {"kind": node.kind, "label": node.label, "confidence": repr(float(node.confidence))}
        if isinstance(node, EntityNode):
            values |= {"why_relevant": node.why_relevant, "evidence": _quotes(node.evidence)}
        elif isinstance(node, PlaceholderNode):
            values |= {"description": node.description}
        for key, value in values.items():
            ET.SubElement(el, "data", key=f"n_{key}").text = value
    for edge in scaffold.edges.values():
        el = ET.SubElement(graph, "edge", id=edge.id, source=edge.source, target=edge.target)
        for key, value in (("type", edge.type), ("strength", repr(float(edge.strength))),
                           ("provisional", "true" if edge.provisional else "false"), ("evidence", _quotes(edge.evidence))):
            ET.SubElement(el, "data", key=f"e_{key}").text = value
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _mermaid_id(node_id: str) -> str:
    return re.sub(r"\W", "_", node_id)


def _mermaid_text(text: str) -> str:
    return text.replace('"', "'").replace("\n", " ")


def to_mermaid(scaffold: Scaffold) -> str:
    """A Mermaid flowchart: entities as boxes with their confidence, placeholders dashed,
    provisional edges dotted, each edge labelled with its type and strength (and "hedged" where
    its sentence hedges); the answer's path drawn thick, its nodes outlined."""
    on_path = {hop.edge for hop in scaffold.path}
    path_nodes = [_mermaid_id(n) for n in dict.fromkeys(x for hop in scaffold.path for x in (hop.source, hop.target))]
    lines = ["flowchart LR"]
    for node in scaffold.nodes.values():
        nid = _mermaid_id(node.id)
        text = _mermaid_text(f"{node.label} ({node.confidence:.2f})")
        lines.append(f'    {nid}{{{{"{text}"}}}}' if isinstance(node, PlaceholderNode) else f'    {nid}["{text}"]')
    for edge in scaffold.edges.values():
        label = _mermaid_text(f"{edge.type} {edge.strength:.2f}" + (" hedged" if edge.hedged else ""))
        arrow = "==>" if edge.id in on_path else "-.->" if edge.provisional else "-->"
        lines.append(f'    {_mermaid_id(edge.source)} {arrow}|"{label}"| {_mermaid_id(edge.target)}')
    placeholders = [_mermaid_id(n.id) for n in scaffold.placeholders()]
    if placeholders:
        lines.append("    classDef placeholder stroke-dasharray: 5 5")
        lines.append(f"    class {','.join(placeholders)} placeholder")
    if path_nodes:
        lines.append("    classDef path stroke-width:3px")
        lines.append(f"    class {','.join(path_nodes)} path")
    return "\n".join(lines) + "\n"


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise MootError(f"cannot tell the graph format from {path.name!r}", fix="end --out with .json, .graphml or .mmd")
    return fmt


def _cannot_write(path: Path, exc: OSError) -> MootError:
    return MootError(f"cannot write {path}: {exc.strerror or exc}", fix="choose a --out path in a folder you can write to")


def check_out(path: str | Path) -> str:
    """Before a run: the format of ``path``, and a one-line error now, not after the model calls,
    when the graph could not be written there (a folder, a parent that cannot be made or written)."""
    path = Path(path)
    fmt = _format_of(path)
    if path.is_dir():
        raise MootError(f"cannot write {path}: it is a folder", fix="end --out with a file name, e.g. DIR/graph" + path.suffix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    return fmt


def write_graph(path: str | Path, scaffold: Scaffold, payload: dict[str, Any] | None = None) -> str:
    """Write the graph in the format its extension names; returns the format. ``payload`` is the
    JSON written for ``.json`` (the whole result); the scaffold alone when not given. The file is
    written beside its place and renamed over it, so a failed write (a full disk) leaves the
    file that was there whole."""
    path = Path(path)
    fmt = _format_of(path)
    if fmt == "json":
        text = json.dumps(payload if payload is not None else scaffold.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
    elif fmt == "graphml":
        text = to_graphml(scaffold)
    else:
        text = to_mermaid(scaffold)
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    return fmt
