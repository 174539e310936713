"""The app's final platform state (the shape of its `/api/debug/state`) rebuilt from an episode's logged
tool calls, for runs without `state.json` (the public runner never writes one).

The calls are replayed against a model of the app as the runner drives it (BITHLP/LivingScreen `app.py`,
`templates/index.html`, `static/style.css`, `static/script.js`, at the viewport of `env.py`): taps on the
side bar's like / comment / collect / report, the comment drawer (input, send, close), the report modal
(category, reason, cancel, submit), the progress bar and the video itself (play / pause); swipes by the
script's drag rule; `type` into whatever has focus (with nothing focused, a space scrolls the feed when the last
press landed in it). A call whose effect cannot be told from the log (a tap within `SLACK` of an edge where the
outcomes differ, a like after the feed moved by an unknown amount, a Tab) makes the whole state unknown, with the
reason: it never guesses. A move of the feed that nothing later depends on only makes `current` unknown.

The page's geometry, and what a press does to focus and the caret, are in `page.py`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from curation.env.episodes import ToolCall
from curation.env.page import (
    CATEGORIES,
    CLICK_MAX,
    DRAG_GAIN,
    FOCUSABLE,
    IN_FEED,
    ITEM_H,
    KEEPS_CARET,
    KEEPS_FOCUS,
    LEAVE,
    NEUTRAL,
    PROGRESS,
    SETTLE_PX,
    SLACK,
    SNAP,
    STEPS,
    TAKES_CARET,
    UNKNOWN,
    VIEW_H,
    VIEW_W,
    page_targets,
)


class Unresolved(Exception):
    """An action whose effect on the state cannot be told from the log."""


@dataclass
class RebuiltState:
    state: list[dict[str, Any]] | None      # like the app's /api/debug/state; None when unknown
    unknown_reason: str | None = None
    current: int | None = None              # feed position on screen at the end (None: unknown)
    playback: dict[str, Any] | None = None  # the current video's paused / seek; None when unknown
    notes: list[str] = field(default_factory=list)  # one line per call: what it did


class _App:
    def __init__(self, feed_len: int, initial: list[dict[str, Any]] | None, icons: bool | None) -> None:
        self.videos: list[dict[str, Any]] = copy.deepcopy(initial) if initial is not None else [
            {"id": i + 1, "is_liked": False, "is_collected": False, "comments": [], "reports": []}
            for i in range(feed_len)]
        self.layouts = [(i, w) for i in ((False, True) if icons is None else (icons,)) for w in (False, True)]
        self.current: int | None = 0
        self.panel: str | None = None          # None | "comments" | "report"
        self.target: int | None = None         # script.js currentVideoId, as a feed position
        self.focus: str | None = "body"        # None: unknown
        self.values = {"input": "", "reason": ""}
        self.caret_end = {"input": True, "reason": True}
        # the text field holding the document's caret: where Playwright's insertText puts what its US layout
        # has no key for (Chinese, full-width punctuation), whatever has focus; None: no field; UNKNOWN
        self.caret: str | None = None
        self.button_presses = 0                # presses of a focused button within one `type`
        self.category: str | None = None
        self.paused: bool | None = False
        self.seek: float | None = None
        self.after = 0.0                       # seconds waited since the video (re)started or was sought
        self.playback_known = True
        # Where a space goes with nothing focused: Chromium scrolls the scroller around the node last pressed.
        # False: nothing scrolls (nothing pressed yet, or last pressed outside the feed: the body's 766 px of
        # content fit the 812 px viewport); True: the feed; None: unknown (an ambiguous press).
        self.space_scrolls_feed: bool | None = False
        self.lost = ""                         # why `current` became unknown
        self.settle_next = 0.0                 # px the feed may still have to travel when the next call comes
        self.settle = 0.0                      # ... for this call (+: the feed moves forward, content sits lower)

    def pressed(self, hits: set[str]) -> None:
        in_feed = {t in IN_FEED for t in hits}
        self.space_scrolls_feed = in_feed.pop() if len(in_feed) == 1 else None

    def candidates(self, x: float, y: float) -> set[str]:
        hits = set()
        # while the feed settles its content is displaced: a point at y meets what comes to rest at y - offset
        offsets = [0.0] if not self.settle or self.panel else [self.settle * k / 30 for k in range(31)]
        for icons, wide in self.layouts:
            for grow in (-SLACK, SLACK):
                for off in offsets:
                    hits.add(next((n for n, b in page_targets(self.panel, icons, wide) if b.has(x, y - off, grow)),
                                  "outside"))
        return hits

    def pick(self, x: float, y: float, what: str) -> str | None:
        """The one target at a point; None after an ambiguity that only touches focus or playback."""
        hits = self.candidates(x, y)
        if len(hits) == 1:
            return hits.pop()
        if not hits <= NEUTRAL:
            raise Unresolved(f"{what} at ({x:.1f}, {y:.1f}) px could be any of {', '.join(sorted(hits))}")
        self.playback_known &= not hits & {"canvas", "seek"}
        for t in hits:
            self.move_caret(t)
        keeps = hits & KEEPS_FOCUS
        self.focus = "body" if not keeps else (self.focus if keeps == hits else None)
        return None

    def video(self) -> int:
        if self.current is None:
            raise Unresolved(f"which video is on screen is unknown ({self.lost})")
        return self.current

    def move_caret(self, t: str) -> None:
        """What a press of `t` does to the caret (see KEEPS_CARET)."""
        if t in ("input", "reason"):
            self.caret = t
        elif t in TAKES_CARET:
            self.caret = None
        elif t not in KEEPS_CARET and self.caret is not None:
            self.caret = UNKNOWN

    def press(self, t: str) -> None:
        self.move_caret(t)
        if t in FOCUSABLE:
            if t in self.values:  # a click in non-empty text puts the caret where it lands
                self.caret_end[t] = not self.values[t]
            self.focus = t
        elif t not in KEEPS_FOCUS:
            self.focus = "body"

    def click(self, t: str) -> str:
        if t in ("like", "collect"):
            i, flag, count = self.video(), {"like": "is_liked", "collect": "is_collected"}[t], f"{t}s"
            v = self.videos[i]
            v[flag] = not v.get(flag, False)
            if count in v:
                v[count] += 1 if v[flag] else -1
            return f"{t} on video {i} -> {v[flag]}"
        if t in ("comment", "report"):
            self.panel, self.target = ("comments" if t == "comment" else "report"), self.video()
            return f"{self.panel} opened on video {self.target}"
        if t == "close":
            self.panel = None
            return "comment drawer closed"
        if t == "send":
            if not self.values["input"]:
                return "send with an empty input: nothing"
            assert self.target is not None
            text, self.values["input"] = self.values["input"], ""
            self.videos[self.target]["comments"].append({"id": None, "user": "Agent_User", "text": text,
                                                         "replies": []})
            return f"comment {text!r} posted on video {self.target}"
        if t.startswith("cat"):
            self.category, self.focus = CATEGORIES[int(t[3:])], "radio"
            return f"category {self.category}"
        if t == "cancel":
            self.panel, self.focus = None, "body"
            self.caret = None if self.caret in ("reason", None) else UNKNOWN  # the hidden reason loses it
            return "report cancelled"
        if t == "confirm":
            if self.category is None:
                return "submit without a category: the app alerts, nothing sent"
            assert self.target is not None
            self.videos[self.target]["reports"].append({"category": self.category, "reason": self.values["reason"],
                                                        "timestamp": None})
            self.panel, self.focus = None, "body"
            self.caret = None if self.caret in ("reason", None) else UNKNOWN
            return f"report {self.category} submitted on video {self.target}"
        if t == "canvas":
            if self.paused is not None:
                self.paused = not self.paused
            return "play / pause"
        return f"{t} focused" if t in self.values else f"{t}: nothing"

    def tap(self, x: float, y: float) -> str:
        self.pressed(self.candidates(x, y))
        t = self.pick(x, y, "tap")
        if t is None:
            return "ambiguous between controls that only touch focus or playback"
        if t == "seek":
            self.do_seek(x)
            return f"seek to {self.seek:.0%}"
        self.press(t)
        return self.click(t)

    def do_seek(self, x: float) -> None:
        # script.js updateSeek: the fraction of the progress container's width, clamped to 0–1
        fraction = (x - PROGRESS.x0) / (PROGRESS.x1 - PROGRESS.x0)
        self.focus, self.seek, self.after = "body", min(1.0, max(0.0, fraction)), 0.0

    def swipe(self, x1: float, y1: float, x2: float, y2: float) -> str:
        start = self.candidates(x1, y1)
        self.pressed(start)
        points = [(x1 + (x2 - x1) * k / STEPS, y1 + (y2 - y1) * k / STEPS) for k in range(1, STEPS + 1)]
        # script.js compares pageX with startY too (its deltaX bug), so only a near-still press is a click
        still = max(max(abs(px - y1), abs(py - y1)) for px, py in points) <= CLICK_MAX
        if start <= {"canvas", "time"}:
            self.playback_known &= len(start) == 1  # only the video itself toggles on a near-still press
            return self.drag(y2 - y1, still)
        if len(start) > 1:
            if start & {"canvas", "time"} and not self.drag_stays(y2 - y1):
                raise Unresolved(f"swipe from ({x1:.1f}, {y1:.1f}) px may or may not drag the feed")
            self.pick(x1, y1, "swipe start")
            return "swipe from an ambiguous point that only touches focus or playback"
        t = next(iter(start))
        if t == "seek":
            self.do_seek(x2)
            return f"seek drag to {self.seek:.0%}"
        self.press(t)
        end = self.candidates(x2, y2)
        if t in NEUTRAL or t not in end:
            return f"swipe from {t}: no click"
        if len(end) > 1:
            raise Unresolved(f"swipe from {t} ends where it may or may not still be on it")
        return self.click(t)

    def drag_stays(self, dy: float) -> bool:
        return self.current is not None and abs(self.delta(dy)) < SNAP - 1 and abs(self.delta(dy)) < LEAVE - 1

    def delta(self, dy: float) -> float:
        assert self.current is not None
        top, last = self.current * ITEM_H, (len(self.videos) - 1) * ITEM_H
        return min(last, max(0.0, top - dy * DRAG_GAIN)) - top  # scrollTop stops at either end of the feed

    def drag(self, dy: float, still: bool) -> str:
        if self.current is None:
            return "feed drag from an unknown video"
        moved = self.delta(dy)
        if abs(abs(moved) - SNAP) <= 1:
            self.current, self.lost = None, "an earlier swipe at the snap threshold"  # raised only if used later
            return f"feed drag of {moved:.1f} px, at the {SNAP:.0f} px snap threshold: video unknown"
        if abs(abs(moved) - LEAVE) <= 1:
            self.playback_known = False
        if abs(moved) > SNAP:
            self.current += 1 if moved > 0 else -1
            if abs(moved) < ITEM_H / 2:
                self.settle_next = SETTLE_PX if moved > 0 else -SETTLE_PX
            self.paused, self.seek, self.after = False, None, 0.0  # the observer plays the new one from 0
            return f"feed drag of {moved:.1f} px -> video {self.current}"
        if abs(moved) > LEAVE:
            self.paused, self.seek, self.after = False, None, 0.0
        if still and self.paused is not None:
            self.paused = not self.paused
            return "near-still drag counts as a click: play / pause"
        return f"feed drag of {moved:.1f} px, under the {SNAP:.0f} px threshold: stays on video {self.current}"

    def type(self, text: str) -> str:
        """env.py type_text: Playwright's keyboard.type, then Enter. A character its US layout has a key for is a
        key press on whatever has focus; any other (Chinese, full-width punctuation) is an insertText, which
        Chromium puts in the text field holding the caret, focusing it (probe_caret.py): so after a swipe off
        send, Chinese text goes into the comment input and the Enter after it stays there, nothing is sent."""
        if "\t" in text:  # keyboard.type sends Tab as a key: focus moves along the page's tab order
            raise Unresolved("type with a Tab, which moves the focus")
        self.button_presses = 0
        return "; ".join(self.keys(run) if keyed else self.insert(run) for run, keyed in _runs(text + "\n"))

    def insert(self, text: str) -> str:
        c = self.caret
        if c == UNKNOWN:
            raise Unresolved(f"text {text!r} goes to the field holding the caret, which is unknown after a press "
                             "never probed with a caret in a field")
        if c is None:
            return f"{text!r} inserted with no text field holding the caret: nothing"
        if not self.caret_end[c] and self.values[c]:
            raise Unresolved(f"text inserted into {c} whose caret was put inside its text by a click")
        self.values[c] += text
        self.focus = c
        return f"{text!r} inserted at the caret: {c} now {self.values[c]!r}, focused"

    def keys(self, text: str) -> str:
        f = self.focus
        if f is None:
            raise Unresolved("type with focus unknown (after an ambiguous tap)")
        if f in self.values:
            if not self.caret_end[f] and self.values[f]:
                raise Unresolved(f"type into {f} whose caret was put inside its text by a click")
            # Enter is a newline in the textarea, nothing in the input
            self.values[f] += text.replace("\n", "") if f == "input" else text
            return f"typed into {f}: now {self.values[f]!r}"
        if f in ("send", "cancel", "confirm"):  # Enter (and each space) on a focused button clicks it
            presses = text.count(" ") + text.count("\n")
            self.button_presses += presses
            if self.button_presses > 1 and (f == "send" and self.values["input"] or f == "confirm" and self.category):
                raise Unresolved(f"{self.button_presses} presses of {f} while its first request is in flight")
            return "; ".join(self.click(f) for _ in range(presses)) or f"keys on {f}: nothing"
        if " " in text and f == "body":
            # probed on the runner's page (Playwright 1.58, Debian chromium): with nothing focused, spaces scroll the
            # feed when the last press was in it (a tap on the video, a side-bar control, a swipe), by one video or
            # two for the same keys; nothing moves before any press, or after one outside the feed (the frame, the
            # drawer, the modal)
            if self.space_scrolls_feed is None:
                raise Unresolved("type with a space, nothing focused, after a press that may or may not be in the feed")
            if self.space_scrolls_feed:
                self.current, self.lost = None, "spaces typed with nothing focused scrolled the feed"
                self.playback_known = False
                return "typed with nothing focused: the spaces scroll the feed by an unknown number of videos"
            return "typed with nothing focused and no scroller under the last press: nothing"
        return f"typed with {f} focused: nothing"


def _runs(text: str) -> list[tuple[str, bool]]:
    """`text` cut where Playwright switches between key presses (printable ASCII and Enter: its US layout) and
    insertText (anything else); (run, keyed)."""
    runs: list[tuple[str, bool]] = []
    for ch in text:
        keyed = " " <= ch <= "~" or ch in "\n\r"
        ch = "\n" if ch == "\r" else ch
        if runs and runs[-1][1] == keyed:
            runs[-1] = (runs[-1][0] + ch, keyed)
        else:
            runs.append((ch, keyed))
    return runs


def watch_seconds(seconds: float, fps: float) -> float:
    """How long a watch sleeps: env.py get_recording takes max(1, int(seconds * fps)) frames `seconds / frames`
    apart, the first at once (fps defaults to 1 in main_threaded.py run_task); a 3 s watch at 0.5 fps takes one
    frame and no time."""
    frames = max(1, int(seconds * fps))
    return (frames - 1) * seconds / frames


def rebuild_state(calls: list[ToolCall], feed_len: int, initial: list[dict[str, Any]] | None = None,
                  icons: bool | None = None) -> RebuiltState:
    """Replay `calls` (episodes.parse_calls) on a feed of `feed_len` videos. `initial`: the app's state after its
    reset, if known (counts and earlier comments are then kept as the app keeps them); otherwise each video has
    only id, flags, reports and the agent's comments. `icons`: whether the page's lucide icons loaded (they did
    not in the recorded runs: the runner's page loads them from unpkg); None accepts a tap only where both
    layouts agree."""
    if feed_len < 1:
        raise ValueError(f"feed_len must be at least 1, got {feed_len}")
    if initial is not None and len(initial) != feed_len:
        raise ValueError(f"initial state has {len(initial)} videos, feed_len is {feed_len}")
    app = _App(feed_len, initial, icons)
    notes: list[str] = []
    broken_turn = None
    try:
        for n, call in enumerate(calls):
            head = f"#{n} turn {call.turn} {call.name}({', '.join(f'{k}={v}' for k, v in call.args.items())})"
            if call.turn == broken_turn:  # main_threaded.py run_task stops a turn at its first invalid call
                notes.append(f"{head}: not run (after an invalid call in its turn)")
                continue
            if call.problem is not None:
                broken_turn = call.turn
                notes.append(f"{head}: invalid ({call.problem}), nothing done")
                continue
            a = call.args
            app.settle, app.settle_next = app.settle_next, 0.0
            if call.name == "click":
                what = app.tap(a["x"] / 1000 * VIEW_W, a["y"] / 1000 * VIEW_H)
            elif call.name == "swipe":
                what = app.swipe(a["x1"] / 1000 * VIEW_W, a["y1"] / 1000 * VIEW_H,
                                 a["x2"] / 1000 * VIEW_W, a["y2"] / 1000 * VIEW_H)
            elif call.name == "type":
                what = app.type(str(a["text"]))
            elif call.name == "wait":
                app.after += float(a["seconds"])
                what = "time passes"
            elif call.name == "watch":
                app.after += watch_seconds(float(a["seconds"]), float(a.get("fps", 1)))
                what = "time passes while frames are taken"
            else:  # answer, finish, mark_point: nothing on the page
                what = "no effect on the page"
            notes.append(f"{head}: {what}")
    except Unresolved as exc:
        notes.append(f"{head}: UNRESOLVED: {exc}")
        return RebuiltState(None, f"call #{n} ({call.name}): {exc}", None, None, notes)
    playback = ({"video": app.current, "paused": app.paused, "seek_fraction": app.seek, "seconds_after": app.after}
                if app.playback_known and app.current is not None else None)
    return RebuiltState(app.videos, None, app.current, playback, notes)
