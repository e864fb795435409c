"""Load a YAML file together with the line of every node, for error messages that name the line.

User files (lab inventory, threshold files) are validated with jsonschema, whose errors carry a
JSON path (``error.absolute_path``, a deque such as ``['drives', 0, 'match']``) but no line. This
module parses the file once with PyYAML's composer, builds the Python data from the node tree and
records, for every node, the 1-based line where it starts, keyed by the same JSON-path text that
:func:`json_path` gives for a jsonschema error. So::

    data, lines = load_yaml_with_lines("inventory.yaml")
    for err in validator.iter_errors(data):
        key = json_path(err.absolute_path)           # 'drives[0].match'
        line = line_of(lines, err.absolute_path)     # 7 (nearest known ancestor if needed)

Path text: list indexes as ``[i]``, mapping keys joined with ``.``; a key that holds ``.``, ``[``,
``]``, ``"``, whitespace or is empty is written quoted, ``["write.bw_mbps"]``, so a path never
reads two ways. The root is ``''``. For a mapping entry the recorded line is the line of its key
(where a reader looks), for a list item the line where the item starts.

Strictness beyond PyYAML's ``safe_load`` (each a ``ConfigError`` naming the file, line and key):

* a key repeated in one mapping (PyYAML keeps the last one silently, which would drop a limit or
  an inventory entry without a word);
* collections nested more than ``MAX_DEPTH`` levels deep (PyYAML's composer recurses once per
  level: 1000 unclosed ``[`` made it raise ``RecursionError``);
* a number that is not finite (``.nan``, ``.inf``, ``1e999``: no limit, size, speed or count
  means that) or beyond 2**64 in magnitude (``bounds.check_number``: a bigger integer overflows
  ``float()``, and one of more than 4300 digits cannot even be built). Negative numbers are left
  to each file's schema.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pytest_ssdqual.bounds import OutOfRange, check_number
from pytest_ssdqual.errors import ConfigError

__all__ = ["MAX_DEPTH", "json_path", "line_of", "load_yaml_with_lines", "parse_yaml_with_lines"]

#: The deepest nesting of collections a user file may have (threshold files and inventories
#: need about 6 levels).
MAX_DEPTH = 64
#: Longest text of a YAML integer or float scalar read as a number (2**64 in binary with its
#: ``0b`` prefix and a sign is 67 characters).
_MAX_NUMBER_TEXT = 100
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_SCALARS = SafeConstructor()  # builds one int/float scalar for the range check


class _TooDeep(Exception):
    """Nesting beyond ``MAX_DEPTH``: where it started (line) and under which key."""

    def __init__(self, mark: yaml.Mark | None, key: str | None) -> None:
        super().__init__(key)
        self.mark, self.key = mark, key


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than ``MAX_DEPTH`` before its recursive
    composer runs out of stack."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._path: list[str | int] = []

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if parent is not None:
            self._path.append(index.value if isinstance(index, ScalarNode) else
                              index if isinstance(index, int) else "?")
        try:
            if len(self._path) > MAX_DEPTH:
                named = [i for i, part in enumerate(self._path) if isinstance(part, str)]
                key = json_path(self._path[: named[-1] + 1]) if named else None
                raise _TooDeep(self.peek_event().start_mark, key)
            return super().compose_node(parent, index)
        finally:
            if parent is not None:
                self._path.pop()

_PLAIN_KEY = re.compile(r'[^.\[\]"\s]+')
_MERGE_TAG = "tag:yaml.org,2002:merge"


def json_path(path_deque: Iterable[str | int]) -> str:
    """Format a JSON path (e.g. jsonschema's ``error.absolute_path``) as text.

    Args:
        path_deque: path parts from the root: ``str`` mapping keys and ``int`` list indexes,
            e.g. ``deque(['drives', 0, 'match', 'model'])``.

    Returns:
        ``'drives[0].match.model'``; ``''`` for the root. Keys that are not plain (holding ``.``,
        brackets, quotes, whitespace, or empty) are quoted: ``limits["write.bw_mbps"]``.
    """
    text = ""
    for part in path_deque:
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
            continue
        key = str(part)
        if _PLAIN_KEY.fullmatch(key):
            text += f".{key}" if text else key
        else:
            escaped = key.replace("\\", "\\\\").replace('"', '\\"')
            text += f'["{escaped}"]'
    return text


def line_of(lines: Mapping[str, int], path_deque: Iterable[str | int]) -> int | None:
    """Line of the node at ``path_deque``, or of its nearest ancestor that has one.

    jsonschema reports a missing required key at the parent object's path, and a bad value inside
    a node that a YAML alias shares under another name may not be recorded: falling back to the
    closest recorded ancestor still points the user at the right block.

    Args:
        lines: the map returned by :func:`load_yaml_with_lines`.
        path_deque: path parts as for :func:`json_path`.

    Returns:
        1-based line, or ``None`` when not even the root is recorded (empty document).
    """
    parts = list(path_deque)
    for end in range(len(parts), -1, -1):
        line = lines.get(json_path(parts[:end]))
        if line is not None:
            return line
    return None


def _path_at_error(text: str) -> str | None:
    """JSON path of the last node PyYAML's parser reached before a syntax error, or None.

    Replays the parse events (which keep coming until the error) with a stack of open
    mappings / sequences, so a syntax error can name the key it happened under.
    """
    stack: list[list[object]] = []  # [kind, current key or index, expecting a key]
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                stack.pop()
                if stack and stack[-1][0] == "map":
                    stack[-1][2] = True
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            if stack and stack[-1][0] == "map":
                frame = stack[-1]
                if frame[2]:  # this node is a key
                    frame[1] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                    frame[2] = False
                    if isinstance(event, yaml.CollectionStartEvent):
                        is_map = isinstance(event, yaml.MappingStartEvent)
                        stack.append(["map" if is_map else "seq", None, True])
                    continue
                if not isinstance(event, yaml.CollectionStartEvent):
                    frame[2] = True
            elif stack and stack[-1][0] == "seq":
                index = stack[-1][1]
                stack[-1][1] = index + 1 if isinstance(index, int) else 0
            if isinstance(event, yaml.MappingStartEvent):
                stack.append(["map", None, True])
            elif isinstance(event, yaml.SequenceStartEvent):
                stack.append(["seq", None, True])
    except yaml.YAMLError:
        pass
    parts = [frame[1] for frame in stack if isinstance(frame[1], str | int)]
    return json_path(parts) or None


def _source_line(text: str, line: int | None) -> str:
    """Line ``line`` (1-based) of ``text``, stripped; ``''`` when out of range."""
    lines = text.splitlines()
    return lines[line - 1].strip() if line is not None and 0 < line <= len(lines) else ""


def _syntax_error(exc: yaml.YAMLError, file: str, text: str) -> ConfigError:
    context_mark = getattr(exc, "context_mark", None)
    mark = getattr(exc, "problem_mark", None) or context_mark
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    position = getattr(exc, "position", None)  # ReaderError (a control character): no mark
    if line is None and isinstance(position, int):
        line = text.count("\n", 0, position) + 1
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}"
    if mark is not None:
        message += f", column {mark.column + 1}"
    if context:
        message += f" ({context}"
        if context_mark is not None and context_mark.line + 1 != line:
            message += f" started at line {context_mark.line + 1}"
            started = _source_line(text, context_mark.line + 1)
            if started:
                message += f": {started!r}"
        message += ")"
    here = _source_line(text, line)
    if here:
        message += f", at {here!r}"
    fix = "correct the YAML syntax at that line"
    if "\t" in problem or "'\\t'" in problem:
        fix = "indent with spaces, not tabs"
    return ConfigError(message, file=file, line=line, key=_path_at_error(text), fix=fix)


def _record(
    node: Node,
    parts: list[str | int],
    line: int,
    lines: dict[str, int],
    file: str,
    active: set[int],
) -> None:
    """Record ``node`` at ``parts`` (first writer wins), then its children; a number scalar
    out of range raises ``ConfigError`` (:func:`_check_scalar`)."""
    lines.setdefault(json_path(parts), line)
    if isinstance(node, ScalarNode):
        _check_scalar(node, parts, line, file)
    if id(node) in active:  # a recursive alias (&a [*a]): stop, the data itself is cyclic
        return
    active.add(id(node))
    try:
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                _record(item, [*parts, index], item.start_mark.line + 1, lines, file, active)
        elif isinstance(node, MappingNode):
            _record_mapping(node, parts, lines, file, active)
    finally:
        active.discard(id(node))


def _check_scalar(node: ScalarNode, parts: list[str | int], line: int, file: str) -> None:
    """Refuse an int/float scalar that is not finite or beyond 2**64 (module docstring)."""
    if node.tag not in (_INT_TAG, _FLOAT_TAG):
        return
    problem = None
    digits = node.value.lstrip("+-")
    if len(node.value) > _MAX_NUMBER_TEXT:
        problem = (f"a {len(digits)}-digit integer" if digits.isdigit() else
                   f"a number written with {len(node.value)} characters") + " is beyond 2^64"
    else:
        build = (_SCALARS.construct_yaml_int if node.tag == _INT_TAG
                 else _SCALARS.construct_yaml_float)
        try:
            check_number(build(node), minimum=None)
        except OutOfRange as exc:
            problem = str(exc)
        except ValueError:  # a form PyYAML resolves but cannot build: let it say so later
            return
    if problem is not None:
        raise ConfigError(
            f"{problem}: not a value any setting can take",
            file=file, line=line, key=json_path(parts) or None,
            fix="write a finite number (no .nan or .inf) within +-2^64, as the key documents; "
                "if the value is text (a serial number, a firmware version), quote it: "
                f'{parts[-1] if parts and isinstance(parts[-1], str) else "key"}: '
                f'"{node.value if len(node.value) <= 40 else "..."}"',
        )


def _record_mapping(
    node: MappingNode, parts: list[str | int], lines: dict[str, int], file: str, active: set[int]
) -> None:
    seen: dict[str, int] = {}
    merged: list[MappingNode] = []
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE_TAG:
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            merged.extend(n for n in sources if isinstance(n, MappingNode))
            continue
        if not isinstance(key_node, ScalarNode):
            continue  # a complex key: PyYAML's constructor rejects it if it is unhashable
        key = key_node.value
        key_line = key_node.start_mark.line + 1
        _check_scalar(key_node, [*parts, key], key_line, file)
        if key in seen:
            raise ConfigError(
                f"duplicate key {key!r} (first at line {seen[key]}); YAML would silently keep "
                "only the last one", file=file, line=key_line, key=json_path([*parts, key]),
                fix="merge the two entries or remove one")
        seen[key] = key_line
        _record(value_node, [*parts, key], key_line, lines, file, active)
    # `<<: *base` keys count where the merged mapping defines them, unless overridden here.
    for source in merged:
        for key_node, value_node in source.value:
            if isinstance(key_node, ScalarNode) and key_node.value not in seen:
                _record(value_node, [*parts, key_node.value], key_node.start_mark.line + 1,
                        lines, file, active)


@functools.cache
def _libyaml_loader() -> type[yaml.CSafeLoader] | None:
    """PyYAML's libyaml loader (``CSafeLoader``) when built in and libyaml refuses deep nesting
    itself (0.2.5: 1000 levels: its recursive C composer cannot run out of stack), else None."""
    loader = getattr(yaml, "CSafeLoader", None)
    try:
        loader("[" * 5000).get_single_node() if loader is not None else None
    except yaml.YAMLError as exc:
        return loader if "nesting depth" in str(exc) else None
    return None


def _deeper_than(root: Node, limit: int) -> bool:
    """Whether a node lies more than ``limit`` collections deep, an alias counted where it is
    used (so a recursive alias is "deep"); without recursion."""
    stack, depth_of = [(root, 0)], dict[int, int]()
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if depth_of.get(id(node), -1) < depth:
            depth_of[id(node)] = depth
            if isinstance(node, SequenceNode):
                stack.extend((item, depth + 1) for item in node.value)
            elif isinstance(node, MappingNode):
                stack.extend((part, depth + 1) for pair in node.value for part in pair)
    return False


def _parse_with_libyaml(text: str, file: str) -> tuple[object, dict[str, int]] | None:
    """:func:`parse_yaml_with_lines` through libyaml, or None for a text it does not build
    cleanly (a syntax error, a failed check, nesting beyond ``MAX_DEPTH``, a recursive alias,
    no libyaml): the pure-Python loader then parses it again and raises its own error, with
    the same wording, line and key as ever."""
    loader_cls = _libyaml_loader()
    if loader_cls is None:
        return None
    try:
        loader = loader_cls(text)
        try:
            node = loader.get_single_node()
            if node is None or _deeper_than(node, MAX_DEPTH):
                return None
            lines: dict[str, int] = {}
            _record(node, [], node.start_mark.line + 1, lines, file, set())
            return loader.construct_document(node), lines
        finally:
            loader.dispose()
    except Exception:  # noqa: BLE001  (the pure-Python parse says what it is)
        return None


def parse_yaml_with_lines(text: str, *, file: str = "<string>") -> tuple[object, dict[str, int]]:
    """Like :func:`load_yaml_with_lines`, on YAML text; ``file`` names it in errors.

    Parsed with libyaml when PyYAML has it (5 threshold files, 1,060 lines: 6 ms instead of
    58 ms); a text libyaml does not build cleanly is parsed by PyYAML's pure-Python loader,
    whose errors are the ones raised (``_parse_with_libyaml``)."""
    fast = _parse_with_libyaml(text, file)
    if fast is not None:
        return fast
    try:
        loader = _BoundedLoader(text)  # its reader rejects control characters right here
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, file, text) from exc
    lines: dict[str, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        # Walk before constructing: the constructor splices `<<` merges into the node tree.
        _record(node, [], node.start_mark.line + 1, lines, file, set())
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, file, text) from exc
    except _TooDeep as exc:
        line = exc.mark.line + 1 if exc.mark is not None else None
        raise ConfigError(
            f"collections nested more than {MAX_DEPTH} levels deep",
            file=file, line=line, key=exc.key,
            fix="close the brackets opened before this line ([ needs ], { needs })",
        ) from None
    finally:
        loader.dispose()
    return data, lines


def load_yaml_with_lines(path: str | Path) -> tuple[object, dict[str, int]]:
    """Read a YAML file (safe loader) and map every node's JSON path to its 1-based line.

    Args:
        path: the YAML file.

    Returns:
        ``(data, lines)``: ``data`` as ``yaml.safe_load`` builds it (``None`` for an empty file);
        ``lines`` maps path text as :func:`json_path` formats it (``'drives[0].match.model'``,
        root ``''``) to a 1-based line number.

    Raises:
        ConfigError: the file cannot be read or is not UTF-8 (``line`` None); a YAML syntax error
            (``line`` from PyYAML's ``problem_mark``, with the column in the message); a key
            repeated in one mapping (``line`` of the second one, ``key`` its path); nesting
            deeper than ``MAX_DEPTH``; a number that is not finite or beyond 2**64 (``line``
            and ``key`` of the value).
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError("file not found", file=file, fix="check the path") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})",
            file=file,
            fix="save the file as UTF-8",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=file) from exc
    return parse_yaml_with_lines(text, file=file)
