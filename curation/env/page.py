"""The runner's page at the runner's viewport, as the replay needs it: where each control is, and what a press of
each does to focus and to the document's caret (BITHLP/LivingScreen `templates/index.html`, `static/style.css`,
`static/script.js`, at the viewport of `env.py`).

Coordinates are CSS px at that viewport; a call's 0–1000 point maps to x/1000*375, y/1000*812
(main_threaded.py run_task). "shot" = measured on the recorded step screenshots (375x812, icons not loaded).
"""

from __future__ import annotations

from typing import NamedTuple

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


def sidebar(icons: bool, wide: bool) -> list[tuple[str, Box]]:
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


def page_targets(panel: str | None, icons: bool, wide: bool) -> list[tuple[str, Box]]:
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
    return [("seek", PROGRESS), ("time", TIME), *sidebar(icons, wide), ("canvas", SCREEN)]
