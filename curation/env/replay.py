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

Coordinates below are CSS px at the runner's viewport; a call's 0–1000 point maps to x/1000*375, y/1000*812
(main_threaded.py run_task). "shot" = measured on the recorded step screenshots (375x812, icons not loaded).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from curation.env.episodes import ToolCall

VIEW_W, VIEW_H = 375.0, 812.0  # env.py PlaywrightThread / VideoAgentEnv: width 375, height 812
SLACK = 2.0                     # px either side of an edge where font metrics or rounding may put it
ITEM_H = 750.0                  # style.css .mobile-container height 750 = .video-feed = one .video-item
SNAP = 0.3 * ITEM_H             # script.js mouseup: scrolled past 30% of clientHeight -> next / previous video
DRAG_GAIN = 1.2                 # script.js mousemove: scrollTop = start - (pageY - startY) * 1.2
LEAVE = 0.2 * ITEM_H            # IntersectionObserver threshold 0.8: past 20% off screen a video is rewound
CLICK_MAX = 5.0                 # script.js togglePlayPause: a drag of more than 5 px is not a click
# probe_settle.py (tests/fixtures/runner-episodes-random/recording): a drag past half a video snaps at once (the
# re-enabled scroll-snap takes the nearest point); one between 30% and 50% snaps back first and then scrolls
# smoothly for about 0.5 s, still 51 px short 0.3 s after the mouse is released (env.py sleeps 0.3 s after a swipe,
# then takes the screenshot): the next call may meet the feed up to that far from where it comes to rest.
SETTLE_PX = 60.0
STEPS = 10                      # env.py swipe: mouse.move(..., steps=10)
CATEGORIES = ("血腥暴力", "不实信息", "虚假营销", "色情低俗")  # index.html report-cat radios, top to bottom


class Box(NamedTuple):
    x0: float
    y0: float
    x1: float
    y1: float

    def has(self, x: float, y: float, grow: float) -> bool:
        return self.x0 - grow <= x <= self.x1 + grow and self.y0 - grow <= y <= self.y1 + grow


# style.css .mobile-container: 375x750 + 8 px border in a 375x812 flex body; overflow: hidden lets it shrink to
# 375 wide, align-items centres it: content x 8–367, y 31–781 (shot: frame at 0–8 / 367–375, 23–31 / 781–789).
SCREEN = Box(8, 31, 367, 781)
# .video-controls left 15 / right 10 / bottom 10: x 23–357, bottom 771; .video-progress-container 40 high ->
# 731–771 (shot: 6 px bar at 748–754); .time-display one 12px monospace line above it, ≈717–731 (shot: text 718–728).
PROGRESS, TIME = Box(23, 731, 357, 771), Box(23, 717, 357, 731)
# .drawer height 75% of 750, bottom 0 when .active: top 31 + 187.5 (shot: 219). Header padding 15 around a 13px line
# -> bottom 264 (shot: border at 264); with lucide icons a 24px svg -> 273. The close "x" is an <i> with no size
# unless lucide loaded (then 24 px at the header's right, x 328–352). Input area: padding 12/15/30 (shot: border
# at 703, input fill x 23–301 y 716–751, "发送" text 322–346 -> its button 313–352).
DRAWER_TOP, INPUT_TOP = 218.5, 703.5
INPUT, SEND, CLOSE = Box(23, 716, 301, 751), Box(313, 716, 352, 751), Box(328, 233.5, 352, 257.5)
# Report modal: .modal-content 85% of 359 + 2x24 padding, centred (shot: white x 11–364, y 206–606); labels fill
# its 305 px content box, 20 high every 35 (gap 15; shot: radios at 295–308, 330–343, ...); textarea 100% + 22 px
# overflows right (shot: 35–362 x 437–539); buttons flex 1 with a 10 px gap (shot: 35–182 / 192–340 x 543–582).
LABELS = tuple(Box(34.9, 291.5 + 35 * k, 340.1, 311.5 + 35 * k) for k in range(4))
REASON, CANCEL, CONFIRM = Box(34.9, 436.5, 361.9, 538.5), Box(34.9, 543, 182.5, 582), Box(192.5, 543, 340.1, 582)

# Targets whose tap changes neither the backend nor a panel (at most focus and playback).
NEUTRAL = {"canvas", "time", "seek", "sidebar", "header", "list", "inputarea", "modal", "outside"}
KEEPS_FOCUS = {"canvas", "time"}  # script.js: mousedown on the feed calls preventDefault, so focus stays put
FOCUSABLE = {"input", "reason", "send", "cancel", "confirm"}  # mousedown focuses them (a label focuses on click)
# Where the document's caret (its selection) goes when something is pressed, probed on the runner's page
# (tests/fixtures/runner-episodes-random/recording/probe_caret.py): it stays in the text field that had it on a
# press of the video, the comment list (blank or on a comment's text, tap or drag), send, or submit while the
# report stays open; it leaves on a press of the page outside the frame, the drawer's header, the blank of the
# input area or the modal, a category, and when the report modal closes. Other presses were never seen with a
# caret in a field (the open drawer or modal covers them): the caret is then unknown.
KEEPS_CARET = {"canvas", "list", "send", "confirm", "input", "reason"}
TAKES_CARET = {"outside", "header", "inputarea", "modal", "cancel", "cat0", "cat1", "cat2", "cat3"}
UNKNOWN = "unknown"
# Targets inside index.html's .video-feed (the feed's scroll container): the side bar and the video's controls are in
# its .video-item; with the drawer open, "canvas" is the strip of feed above it. The drawer and the modal are outside.
IN_FEED = {"seek", "time", "like", "comment", "collect", "report", "sidebar", "canvas"}


def _sidebar(icons: bool, wide: bool) -> list[tuple[str, Box]]:
    """.side-bar right 10 / bottom 60 -> right 357, bottom 721; 52 wide (the 48 px avatar + 2x2 border) -> x
    305–357; items from the bottom up with a 20 px gap. Without lucide an item is the 30 px <i> + 4 + a 14 px span
    = 48 (shot: count baselines 68 apart; like 469–517 -> centre (883, 607) in 0–1000 units); with lucide the
    24 px svg sits in a ≈27.8 px line -> 45.8. An item is as wide as its icon, or its count text when wider."""
    h = 45.8 if icons else 48.0
    narrow = (319.0, 343.0) if icons else (316.0, 346.0)  # the icon's width, centred on x 331
    items = []
    for k, name in enumerate(("report", "collect", "comment", "like")):
        x0, x1 = (305.0, 357.0) if wide and name != "report" else narrow  # "举报" (24 px) is never wider
        items.append((name, Box(x0, 721 - k * (h + 20) - h, x1, 721 - k * (h + 20))))
    return [*items, ("sidebar", Box(305, 721 - 4 * (h + 20) - 56, 357, 721))]  # the avatar wrapper is 56 high


def _targets(panel: str | None, icons: bool, wide: bool) -> list[tuple[str, Box]]:
    """What a point can hit, topmost first."""
    if panel == "report":  # .modal-overlay covers the whole screen (z 200)
        return [*((f"cat{k}", b) for k, b in enumerate(LABELS)), ("reason", REASON), ("cancel", CANCEL),
                ("confirm", CONFIRM), ("modal", SCREEN)]
    if panel == "comments":  # the drawer (z 100) covers everything below its top, side bar and progress bar too
        header = 273.0 if icons else 264.0
        return [*([("close", CLOSE)] if icons else []), ("header", Box(8, DRAWER_TOP, 367, header)),
                ("input", INPUT), ("send", SEND), ("inputarea", Box(8, INPUT_TOP, 367, 781)),
                ("list", Box(8, header, 367, INPUT_TOP)), ("canvas", Box(8, 31, 367, DRAWER_TOP))]
    # .video-controls (z 20) is above .side-bar (z 3) where they meet (717–721)
    return [("seek", PROGRESS), ("time", TIME), *_sidebar(icons, wide), ("canvas", SCREEN)]


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
        self.videos = copy.deepcopy(initial) if initial is not None else [
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
                    hits.add(next((n for n, b in _targets(self.panel, icons, wide) if b.has(x, y - off, grow)),
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
