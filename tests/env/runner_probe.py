"""Run inside a copy of the public runner, with its venv's python: how far video 0 has played when the runner
would grade an agent that does nothing. The runner's own VideoAgentEnv resets the app and opens the page, then the
two screenshots its episode loop takes before the model's first answer (`agent.reset_goal` and the first
feedback); an agent that answers `finish` at once is graded right after. The page is read with Playwright's
evaluate without the `timeout` the runner passes (which Playwright 1.58 refuses), added in memory only.

    python runner_probe.py FEEDS.json PORT ROUNDS   (FEEDS.json: a list of video_feed lists)

Prints one JSON line per round: {"feed": k, "current_time": s, "duration": s, "paused": bool, "elapsed_s": s}.
"""

import json
import socket
import subprocess
import sys
import time

sys.path.insert(0, ".")
import env as runner_env  # noqa: E402  (the runner's own module)
from utils import feed2data  # noqa: E402

PROBE = """() => { const v = document.querySelectorAll('.main-video')[0];
                   return {current_time: v.currentTime, duration: v.duration, paused: v.paused}; }"""
_execute = runner_env.PlaywrightThread._execute_command


def _with_probe(self, cmd):
    if cmd.get("type") == "probe_video_0":
        try:
            self.result_queue.put(("success", self.page.evaluate(PROBE)))
        except Exception as exc:  # noqa: BLE001  (handed back as the runner hands back errors)
            self.result_queue.put(("error", str(exc)))
        return
    _execute(self, cmd)


def _listening(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


runner_env.PlaywrightThread._execute_command = _with_probe
with open(sys.argv[1], encoding="utf-8") as listed:
    feeds = json.load(listed)
port, rounds = int(sys.argv[2]), int(sys.argv[3])
server = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
try:
    listening = time.monotonic() + 60
    while not _listening(port):  # no fixed sleep: a busy machine starts it later
        assert server.poll() is None and time.monotonic() < listening, "the runner's app.py did not listen"
        time.sleep(0.1)
    for n in range(rounds):
        k = n % len(feeds)
        started = time.monotonic()
        agent_env = runner_env.VideoAgentEnv(data=feed2data(feeds[k]), port=port)
        try:
            agent_env.get_screenshot()  # agent.reset_goal(instruction, env.get_screenshot())
            agent_env.get_screenshot()  # run_task's first feedback
            shown = agent_env.playwright_thread.send_command({"type": "probe_video_0"})
            print(json.dumps({"feed": k, **shown, "elapsed_s": time.monotonic() - started}), flush=True)
        finally:
            agent_env.close()
finally:
    server.terminate()
    server.wait()
