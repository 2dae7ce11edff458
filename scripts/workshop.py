"""A workshop rehearsal: N students in real Chromium sessions, all starting together.

    python scripts/workshop.py --students 20 [--same-example | --own-documents] [--processes 2]
                               [--url URL] [--throttle] [--host NAME] [--json OUT]
    python scripts/workshop.py --follow --students 30 [--processes 2] [--idle 60] [--talk 0] [--host NAME] [--json OUT]

Starts the app (``--processes`` > 1: that many behind nginx, scripts/serve.py; ``--url``: an app or
proxy already running, no server measurements), warms each process with one student (the model
loaded, and with ``--same-example`` everything cached, as after the teacher's own try), then drives every
student through: open the app → **Try an example** (or paste an own document and **Summarize**)
→ BERT attention → layer 2 → Why this summary. Prints per step p50/p95/max seconds, failures,
the server's CPU seconds per student flow (user + system of the app processes over the run,
divided by the students) and the app processes' peak memory (VmHWM). ``--throttle`` emulates a
20 Mbit/s down, 5 Mbit/s up, 40 ms link for every student (Chromium's DevTools protocol).
``--host NAME``: as a school reaches it, by a host name: Chromium resolves NAME to this machine, the
servers (behind nginx on a port of their own) make their join links on ``http://NAME:PORT``
(MICROSCOPE_PUBLIC_URL), and every browser opens the app by that name. Bare students
(``--bare``) are not browsers: they use the loopback address.

``--follow``: a class instead (ui/classroom). A scripted teacher picks the shipped lesson, starts
a class and walks every step with Next; the students joined by the class link. Per step: the time
from the teacher's click to each student showing the step (its text), p50/p95, failures (a student
not there within ``--timeout``), the app processes' CPU seconds per student per step; every
browser student answers step 2's question (a choice, by keyboard), and the run says how many
answers the store holds and how soon the teacher's count showed them all; the teacher's own page:
seconds from each Next, and from the Reveal of that question, until its script last ran; then ``--idle``
seconds with nothing changing, once before the students join and once with them: CPU seconds per
student per idle minute (the difference, per student: what following costs); peak memory per
process.

All students share one Chromium on this machine, so on a small machine the browsers compete
with the server for the CPU (the run prints both): the step times are on the safe side of what
students on their own laptops would see; the server's CPU per student does not depend on it.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.common import cpu_seconds, free_port, gather_in_chromium, host_rules, rss_mb  # noqa: E402
from scripts.load_test import documents  # noqa: E402

STEPS = ("open", "summary", "bert_attention", "layer_switch", "why")
NETWORK = dict(offline=False, latency=40, downloadThroughput=20e6 / 8, uploadThroughput=5e6 / 8)  # bytes/s
HEATMAP = """(title) => [...document.querySelectorAll('.js-plotly-plot')].some(gd =>
  (gd._fullData || []).some(t => t.type === 'heatmap') && gd.querySelector('.heatmaplayer image') &&
  (gd.querySelector('.gtitle') || {}).textContent?.includes(title))"""


async def idle(page, timeout_s: float) -> None:
    await page.wait_for_timeout(150)
    await page.wait_for_function("!document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout_s * 1000)


async def busy_for(page, t0: float, timeout_s: float, quiet_s: float = 0.4) -> float:
    """Seconds from ``t0`` until the page was idle for good: the last moment its script ran
    (Streamlit's ``data-test-script-state``; then ``quiet_s`` without a run, and at least 1 s after
    ``t0`` for the first run to start)."""
    last, seen, deadline = t0, False, time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if await page.query_selector('[data-test-script-state="running"]') is not None:
            last, seen = time.perf_counter(), True
        elif time.perf_counter() - last >= quiet_s and (seen or time.perf_counter() - t0 >= 1.0):
            break
        await asyncio.sleep(0.05)
    return last - t0


async def student(browser, url: str, n: int, text: str | None, timeout_s: float, throttle: bool) -> dict:
    """One student's flow: seconds per step, or the step that failed and why."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    if throttle:
        cdp = await context.new_cdp_session(page)
        await cdp.send("Network.enable")
        await cdp.send("Network.emulateNetworkConditions", NETWORK)
    times, step, ms = {}, "open", timeout_s * 1000
    main = page.get_by_test_id("stMain")
    try:
        t = time.perf_counter()
        await page.goto(url, timeout=ms)
        await page.get_by_role("button", name="Try an example").wait_for(timeout=ms)
        times["open"] = time.perf_counter() - t
        await idle(page, timeout_s)

        step, t = "summary", time.perf_counter()
        if text is None:
            await page.get_by_role("button", name="Try an example").click()
        else:
            await page.get_by_role("textbox", name="Document", exact=True).fill(f"Student {n}.\n\n{text}")
            await page.get_by_role("button", name="Summarize").click()
        await main.get_by_role("heading", name="Summary").first.wait_for(timeout=ms)
        await main.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=ms)
        await idle(page, timeout_s)
        times["summary"] = time.perf_counter() - t

        step, t = "bert_attention", time.perf_counter()
        await page.get_by_test_id("stSidebarNav").get_by_text("BERT attention", exact=True).click()
        await page.wait_for_function(HEATMAP, arg="layer 1, head 1", timeout=ms, polling="raf")
        times["bert_attention"] = time.perf_counter() - t
        await idle(page, timeout_s)

        step, t = "layer_switch", time.perf_counter()
        for attempt in range(3):  # a rerun that ends late may close the list: click again, as a student would
            await main.get_by_test_id("stSelectbox").filter(has_text="Layer").first.click(timeout=ms)
            try:
                await page.get_by_role("option", name="2", exact=True).click(timeout=10_000)
                break
            except Exception:  # noqa: BLE001
                if attempt == 2:
                    raise
        await page.wait_for_function(HEATMAP, arg="layer 2, head 1", timeout=ms, polling="raf")
        times["layer_switch"] = time.perf_counter() - t
        await idle(page, timeout_s)

        step, t = "why", time.perf_counter()
        await page.get_by_test_id("stSidebarNav").get_by_text("Why this summary", exact=True).click()
        await main.get_by_text("Which words moved the score").first.wait_for(timeout=ms)
        await main.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=ms)
        await idle(page, timeout_s)
        times["why"] = time.perf_counter() - t
        if await page.get_by_test_id("stException").count():
            raise AssertionError("an exception is shown on the page")
        return {"times": times}
    except Exception as e:  # noqa: BLE001  a failed student is counted, the others go on
        if os.environ.get("WORKSHOP_SHOTS"):
            await page.screenshot(path=os.path.join(os.environ["WORKSHOP_SHOTS"], f"student{n}_{step}.png"))
        return {"times": times, "failed": step, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    finally:
        await context.close()


async def drive(url: str, texts: list[str | None], timeout_s: float, throttle: bool, host: str = "") -> list[dict]:
    """Every student of ``texts`` at once in one Chromium (``host``: a name it resolves to this machine)."""
    return await gather_in_chromium(lambda browser: [student(browser, url, n, t, timeout_s, throttle)
                                                     for n, t in enumerate(texts)], host_rules(host))


def stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "p50": round(statistics.median(xs), 2),
            "p95": round(xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))], 2), "max": round(xs[-1], 2)}


def cpu(pids) -> float:
    """CPU seconds these processes have used so far."""
    return sum(cpu_seconds(p) for p in pids)


def machine_cpu_seconds() -> float:
    """CPU seconds every core of the machine has been busy so far (/proc/stat): less the app
    servers' own, what the students' browsers and Playwright used (Chromium processes are reaped by
    init at shutdown, so their own counters would miss most of it)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, open("/proc/stat").readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def rehearse(url: str, students: int, own: bool, data: Path, timeout_s: float, throttle: bool,
             pids: list[int], warm_urls: list[str], proxy_pids: list[int] = (), host: str = "") -> dict:
    texts = documents(data, students + 1) if own else [None] * (students + 1)
    for warm_url in warm_urls:  # the teacher's try on each process: the model loads, the example is cached
        warm = asyncio.run(drive(warm_url, texts[:1], timeout_s, throttle))[0]
    cpu0, busy0, proxy0 = cpu(pids), machine_cpu_seconds(), cpu(proxy_pids)
    t = time.perf_counter()
    runs = asyncio.run(drive(url, texts[1:], timeout_s, throttle, host))
    wall = time.perf_counter() - t
    used, busy, proxy = cpu(pids) - cpu0, machine_cpu_seconds() - busy0, cpu(proxy_pids) - proxy0
    failed = [r for r in runs if "failed" in r]
    return {"students": students, "documents": "own" if own else "same example", "throttled": throttle,
            "processes": len(pids), "wall_s": round(wall, 1), "warm_up": warm,
            "steps": {s: stats([r["times"][s] for r in runs if s in r["times"]]) for s in STEPS},
            "failures": len(failed), "failed": [{k: r[k] for k in ("failed", "error")} for r in failed],
            "server_cpu_s_per_student": round(used / students, 3) if pids else None,
            "proxy_cpu_s_per_student": round(proxy / students, 3) if proxy_pids else None,  # nginx
            "machine_busy_cpu_s": round(busy, 1), "machine_cpu_s_available": round(wall * (os.cpu_count() or 1), 1),
            "server_cpu_s": round(used, 1) if pids else None,
            "server_peak_mb": [rss_mb(p)["hwm_mb"] for p in pids]}


LESSON = "attention_in_20_minutes"


def watch_version(name: str, published: dict, stop: threading.Event) -> None:
    """When each class version reached the static file the browsers read (a thread, every 10 ms)."""
    from ui.classroom import static_file

    while not stop.is_set():
        try:
            published.setdefault(json.loads(static_file(name).read_text())["v"], time.perf_counter())
        except (OSError, ValueError, KeyError):
            pass
        stop.wait(0.01)


def niced_chromium(nice: int) -> str:
    """Chromium at a lower priority (a wrapper script): the students' browsers take what CPU the
    servers leave, as browsers on the students' own laptops would not compete with them at all."""
    from benchmarks.common import CHROMIUM

    if not nice:
        return CHROMIUM
    wrapper = Path(tempfile.mkdtemp(prefix="microscope_nice_")) / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec nice -n {nice} {CHROMIUM} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


class Student:
    """A student in the class: a Chromium page, or a bare session (benchmarks/bare_session.py: the
    same websocket messages and version reads, nothing drawn). ``seen``: version → when first read."""

    def __init__(self, page=None, bare=None):
        self.page, self.bare = page, bare
        self.seen = bare.seen if bare is not None else {}

    async def shows(self, text: str, timeout_s: float) -> float:
        if self.bare is not None:
            return await self.bare.wait_text(text, timeout_s)
        await self.page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_s * 1000)
        return time.perf_counter()


async def follow_class(url: str, students: int, timeout_s: float, idle_s: float, pids: list[int],
                       proxy_pids: list[int] = (), nice: int = 0, bare: int = 0, store: str = "",
                       bare_url: str = "", host: str = "", talk_s: float = 0) -> dict:
    """The ``--follow`` rehearsal (see the module's docstring); ``store``: the servers' MICROSCOPE_STORE;
    ``bare_url``: where bare students connect (default ``url``); ``host``: the name the browsers resolve
    to this machine (``url`` names it); ``talk_s``: the teacher's seconds on each step before Next."""
    bare_url = bare_url or url
    from playwright.async_api import async_playwright

    from benchmarks.bare_session import BareSession
    from benchmarks.common import CHROMIUM_ARGS
    from ui.tour import lessons

    steps = len(lessons()[LESSON].steps)
    ms = timeout_s * 1000
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=niced_chromium(nice), args=CHROMIUM_ARGS + host_rules(host))
        # the teacher's own browser is never niced: its laptop is not the students' devices
        lectern = await p.chromium.launch(executable_path=niced_chromium(0), args=CHROMIUM_ARGS + host_rules(host)) \
            if nice else browser
        teacher = await (await lectern.new_context(viewport={"width": 1400, "height": 1000})).new_page()
        await teacher.goto(f"{url}?lesson={LESSON}", timeout=ms)  # the lesson picked by the link
        await teacher.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=ms)
        await idle(teacher, timeout_s)
        side = teacher.get_by_test_id("stSidebar")
        await side.get_by_text("Class & lessons").click()  # (the link opened the lesson at its first step)
        await teacher.get_by_text(f"Step 1 of {steps}", exact=False).first.wait_for(timeout=ms)
        await teacher.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=ms)
        await idle(teacher, timeout_s)
        await side.get_by_role("button", name="Start a class").click()
        line = await side.get_by_text("students connected", exact=False).first.inner_text(timeout=ms)
        code = line.split("Class ", 1)[1][:6]
        await idle(teacher, timeout_s)
        base0 = cpu(pids)  # the class with no student yet: the servers' own idle cost
        await asyncio.sleep(idle_s)
        base = cpu(pids) - base0
        published, stop = {}, threading.Event()
        from ui.classroom import poll_name
        from ui.store import Store

        name = poll_name(Store(store), code)  # the version file's name: a random token, not the code
        threading.Thread(target=watch_version, args=(name, published, stop), daemon=True).start()

        async def join_browser():
            page = await (await browser.new_context(viewport={"width": 1400, "height": 1000})).new_page()
            student = Student(page=page)

            async def on_response(response):  # when the page's own poll read each version
                if response.url.endswith(f"/classes/{name}.json"):
                    t = time.perf_counter()
                    try:
                        student.seen.setdefault((await response.json())["v"], t)
                    except Exception:  # noqa: BLE001  a page closing
                        pass
            page.on("response", on_response)
            await page.goto(f"{url}?class={code}", timeout=ms)
            await student.shows(f"Step 1 of {steps}", timeout_s)
            return student

        async def join_bare():
            session = BareSession(bare_url, f"class={code}")
            await session.open()
            student = Student(bare=session)
            await student.shows(f"Step 1 of {steps}", timeout_s)
            student.task = asyncio.create_task(session.follow_class(code))
            return student

        joining = [join_browser() for _ in range(students)] + [join_bare() for _ in range(bare)]
        everyone = await asyncio.gather(*joining, return_exceptions=True)
        joined = [s for s in everyone if isinstance(s, Student)]
        failures = len(everyone) - len(joined)
        kinds = {"browser": [s for s in joined if s.page], "bare": [s for s in joined if s.bare]}
        shown = {kind: [] for kind in kinds}
        per_step = {kind: {} for kind in kinds}
        noticed = {kind: [] for kind in kinds}
        parts, cpu_steps, browser_cpu = [], [], []  # click → version file; server CPU; the rest of the machine's
        teacher_busy = []  # the teacher's page: Next → idle again
        first = max(published, default=0)

        async def shows(student, n, t0, v0):
            try:
                t = await student.shows(f"Step {n} of {steps}", timeout_s)
            except Exception:  # noqa: BLE001  counted
                if os.environ.get("WORKSHOP_SHOTS") and student.page:
                    await student.page.screenshot(path=os.path.join(os.environ["WORKSHOP_SHOTS"], f"step{n}_{id(student)}.png"))
                return None
            saw = min((s for v, s in student.seen.items() if v is not None and v > v0), default=None)
            return t - t0, None if saw is None else saw - t0

        answering = {}
        for n in range(2, steps + 1):
            if n - 1 == ASKED + 1 and not answering:  # the step after the question: the class answered it
                answering = await answer_all(teacher, kinds["browser"], store, code, timeout_s)
                answering["teacher_busy_after_reveal"] = await reveal(teacher, timeout_s)
            await asyncio.sleep(talk_s)
            await idle(teacher, timeout_s)
            cpu0 = cpu(pids)
            other0 = machine_cpu_seconds() - cpu0 - cpu(proxy_pids)
            v0 = max(published, default=0)
            t0 = time.perf_counter()
            await teacher.get_by_test_id("stMain").get_by_role("button", name="Next", exact=True).click()
            busy = asyncio.create_task(busy_for(teacher, t0, timeout_s))  # the teacher's own page (issue 71)
            for kind, group in kinds.items():
                got = await asyncio.gather(*(shows(s, n, t0, v0) for s in group))
                shown[kind] += [g[0] for g in got if g is not None]
                per_step[kind][n] = stats([g[0] for g in got if g is not None])
                noticed[kind] += [g[1] for g in got if g is not None and g[1] is not None]
                failures += sum(g is None for g in got)
            parts += [t - t0 for v, t in published.items() if v > v0][:1]
            teacher_busy.append(await busy)
            cpu1 = cpu(pids)
            cpu_steps.append((cpu1 - cpu0) / max(len(joined), 1))
            other = machine_cpu_seconds() - cpu1 - cpu(proxy_pids) - other0
            browser_cpu.append(other / max(len(kinds["browser"]), 1))
        stop.set()
        versions = (max(published, default=0) - first) / (steps - 1)  # the class's version moves per step
        cpu0, ng0 = cpu(pids), cpu(proxy_pids)
        await asyncio.sleep(idle_s)
        idle_cpu = cpu(pids) - cpu0
        idle_nginx = cpu(proxy_pids) - ng0
        for s in kinds["bare"]:
            s.task.cancel()
            await s.bare.close()
        await browser.close()
        if lectern is not browser:
            await lectern.close()
    return {"mode": "follow", "students": students, "bare_students": bare, "joined": len(kinds["browser"]),
            "bare_joined": len(kinds["bare"]), "processes": len(pids), "browsers_nice": nice,
            "steps": {kind: stats(xs) for kind, xs in shown.items()}, "per_step": per_step,
            "noticed": {kind: stats(xs) for kind, xs in noticed.items()}, "published": stats(parts),
            "teacher_busy_after_next": stats(teacher_busy), "teacher_busy_per_step": [round(x, 2) for x in teacher_busy],
            "failures": failures, "versions_per_step": round(versions, 2), "teacher_talks_s": talk_s,
            "server_cpu_s_per_student_per_step": round(statistics.mean(cpu_steps), 3) if pids else None,
            "browser_cpu_s_per_browser_student_per_step": round(statistics.mean(browser_cpu), 3),
            "idle_cpu_s_per_minute_no_students": round(base * 60 / idle_s, 3),
            "idle_cpu_s_per_student_per_minute": round((idle_cpu - base) / max(len(joined), 1) * 60 / idle_s, 4)
            if pids else None,
            "idle_nginx_cpu_s_per_student_per_minute": round(idle_nginx / max(len(joined), 1) * 60 / idle_s, 4),
            "server_peak_mb": [rss_mb(p)["hwm_mb"] for p in pids], **answering}


ASKED = 1  # the lesson's step (from 0) whose question every browser student answers: a choice


async def reveal(teacher, timeout_s: float) -> float:
    """The teacher's Reveal of the answered question: seconds until the teacher's page is idle
    again (issue 71), as after Next."""
    await idle(teacher, timeout_s)
    t0 = time.perf_counter()
    await teacher.locator("[class*='st-key-reveal_'] button").first.click()  # the bar's, above the page
    return round(await busy_for(teacher, t0, timeout_s), 2)


async def answer_all(teacher, students: list, store: str, code: str, timeout_s: float) -> dict:
    """Every browser student answers the question of step ASKED at once (by keyboard: the option
    focused, then Space); → how many the store holds, and seconds from the last "Answered." on a
    student's page to the teacher's page counting them all."""
    import re

    from ui.classroom.answers import count, step_id
    from ui.tour import lessons
    from ui.store import Store

    assert lessons()[LESSON].steps[ASKED].ask.kind == "choice"
    ms = timeout_s * 1000

    async def answer(s):
        try:
            option = s.page.get_by_test_id("stRadio").get_by_role("radio").nth(1)
            await option.focus()
            await s.page.keyboard.press("Space")
            await s.page.get_by_text("Answered.", exact=False).first.wait_for(timeout=ms)
            return time.perf_counter()
        except Exception:  # noqa: BLE001  counted
            return None

    done = await asyncio.gather(*(answer(s) for s in students))
    answered = [t for t in done if t is not None]
    try:
        await teacher.get_by_test_id("stMain").get_by_text(
            re.compile(rf"^{len(answered)} of \d+ students? answered")).first.wait_for(timeout=ms)
        counted = round(time.perf_counter() - max(answered, default=time.perf_counter()), 2)
    except Exception:  # noqa: BLE001  reported as None
        counted = None
    stored = count(Store(store), code, step_id({"lesson": LESSON, "step": ASKED}))
    return {"answers_given": len(answered), "answers_stored": stored, "answer_failures": len(students) - len(answered),
            "teacher_counted_all_s": counted}


def report_follow(r: dict) -> None:
    print(f"\nA class: {r['joined']} of {r['students']} browser students and {r['bare_joined']} of "
          f"{r['bare_students']} bare ones joined, {r['processes']} app process(es), {r['failures']} failures"
          + (f"; the teacher talked {r['teacher_talks_s']:g} s on each step" if r.get("teacher_talks_s") else ""))
    print(f"{'students':9} {'n':>4} {'p50 s':>7} {'p95 s':>7} {'max s':>7}   teacher's Next → ...")
    for kind in ("browser", "bare"):
        for what, s in (("shows the step", r["steps"][kind]), ("read the new version", r["noticed"][kind])):
            if s["n"]:
                print(f"{kind:9} {s['n']:>4} {s['p50']:>7} {s['p95']:>7} {s['max']:>7}   {what}")
    s = r["teacher_busy_after_next"]
    print(f"{'(teacher)':9} {s['n']:>4} {s.get('p50', '-')!s:>7} {s.get('p95', '-')!s:>7} {s.get('max', '-')!s:>7}"
          "   the teacher's own page is idle again")
    s = r["published"]
    print(f"{'(server)':9} {s['n']:>4} {s.get('p50', '-')!s:>7} {s.get('p95', '-')!s:>7} {s.get('max', '-')!s:>7}"
          f"   the class's version file changed (it moved {r['versions_per_step']} times a step)")
    if "answers_given" in r:
        print(f"answers to step {ASKED + 1}'s question: {r['answers_given']} given, {r['answers_stored']} stored, "
              f"{r['answer_failures']} failed; the teacher's count showed them all "
              f"{r['teacher_counted_all_s']} s after the last one; after the teacher's Reveal the teacher's page "
              f"was idle again in {r.get('teacher_busy_after_reveal')} s")
    if r["browsers_nice"]:
        print(f"(the students' browsers ran at nice {r['browsers_nice']}: the servers and the teacher's browser first)")
    print(f"server CPU per student per step: {r['server_cpu_s_per_student_per_step']} s (the rest of the machine, "
          f"per browser student: {r['browser_cpu_s_per_browser_student_per_step']} s); following while idle: "
          f"{r['idle_cpu_s_per_student_per_minute']} CPU-s per student per minute (nginx: "
          f"{r['idle_nginx_cpu_s_per_student_per_minute']}; the servers with no student: "
          f"{r['idle_cpu_s_per_minute_no_students']} CPU-s a minute); peak memory per process (MB): "
          f"{', '.join(f'{m:.0f}' for m in r['server_peak_mb'])}")
    if (r["idle_cpu_s_per_student_per_minute"] or 0) < 0:  # a difference of two idle measurements
        print("(the idle cost with students came out below the servers' own: a difference within their noise; "
              "more students or a longer --idle measure it)")


def report(r: dict) -> None:
    print(f"\n{r['students']} students, {r['documents']}, {r['processes'] or 'external'} app process(es)"
          f"{', 20/5 Mbit/s + 40 ms' if r['throttled'] else ''}: {r['wall_s']} s, {r['failures']} failed")
    print(f"{'step':16} {'n':>3} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    for step, s in r["steps"].items():
        print(f"{step:16} {s['n']:>3} {s.get('p50', '-')!s:>7} {s.get('p95', '-')!s:>7} {s.get('max', '-')!s:>7}")
    if r["server_cpu_s_per_student"] is not None:
        print(f"server CPU per student flow: {r['server_cpu_s_per_student']} s"
              + (f" (+ nginx {r['proxy_cpu_s_per_student']} s)" if r.get("proxy_cpu_s_per_student") is not None else "")
              + f"; peak memory per process (MB): {', '.join(f'{m:.0f}' for m in r['server_peak_mb'])}")
    print(f"CPU seconds during the run: the machine was busy {r['machine_busy_cpu_s']} of "
          f"{r['machine_cpu_s_available']} ({os.cpu_count()} cores × {r['wall_s']} s); the app server(s) "
          f"{r['server_cpu_s']}, the rest the students' Chromium and Playwright")
    for f in r["failed"]:
        print(f"failed at {f['failed']}: {f['error']}")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--students", type=int, default=20)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--same-example", dest="own", action="store_false", default=False,
                   help="every student clicks Try an example (default)")
    g.add_argument("--own-documents", dest="own", action="store_true", help="each student pastes another article")
    p.add_argument("--processes", type=int, default=1, help="app processes (> 1: behind nginx)")
    p.add_argument("--url", default=None, help="an app or proxy already running (no server measurements)")
    p.add_argument("--throttle", action="store_true", help="20 Mbit/s down, 5 up, 40 ms latency per student")
    p.add_argument("--server-env", nargs="*", default=[], metavar="KEY=VALUE",
                   help="extra environment for the app processes (A/B of a setting)")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--timeout", type=float, default=300, help="seconds one step may take")
    p.add_argument("--json", type=Path)
    p.add_argument("--follow", action="store_true", help="a class: a scripted teacher walks the shipped lesson")
    p.add_argument("--idle", type=float, default=60, help="--follow: seconds of a class with nothing changing")
    p.add_argument("--talk", type=float, default=0,
                   help="--follow: seconds the teacher talks on each step before Next (the lesson's warm-up runs meanwhile)")
    p.add_argument("--nice", type=int, default=0,
                   help="--follow: run the students' browsers at this nice level (the servers and the teacher's first)")
    p.add_argument("--host", default="", metavar="NAME",
                   help="browsers reach the servers by this host name (resolved to this machine), as a school's do")
    p.add_argument("--bare", type=int, default=0,
                   help="--follow: this many more students as bare sessions (benchmarks/bare_session.py)")
    args = p.parse_args(argv)
    port = free_port() if args.host else None  # at a host name: behind nginx, whose port the join links name
    public = {"MICROSCOPE_PUBLIC_URL": f"http://{args.host}:{port}"} if args.host else {}

    def at_host(url: str) -> str:
        return f"http://{args.host}:{port}/" if args.host else url

    if args.follow:
        from scripts.serve import Cluster

        logs = Path(tempfile.mkdtemp(prefix="microscope_class_"))
        env = {"MICROSCOPE_STORE": str(logs / "documents.sqlite3"), **public,
               **dict(kv.split("=", 1) for kv in args.server_env)}
        with Cluster(args.processes, logs, port=port, env=env) as cluster:
            result = asyncio.run(follow_class(at_host(cluster.url + "/"), args.students, args.timeout, args.idle,
                                              cluster.pids(), cluster.proxy_pids(), args.nice, args.bare,
                                              env["MICROSCOPE_STORE"], cluster.url + "/", args.host, args.talk))
        result["host"] = args.host or None
        report_follow(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
        return result
    if args.url:
        result = rehearse(args.url, args.students, args.own, args.data, args.timeout, args.throttle, [], [args.url])
    else:
        from scripts.serve import Cluster

        logs = Path(tempfile.mkdtemp(prefix="microscope_workshop_"))
        env = {"MICROSCOPE_STORE": str(logs / "documents.sqlite3"), **public,
               **dict(kv.split("=", 1) for kv in args.server_env)}
        with Cluster(args.processes, logs, port=port, env=env) as cluster:
            result = rehearse(at_host(cluster.url + "/"), args.students, args.own, args.data, args.timeout,
                              args.throttle, cluster.pids(), [s.url + "/" for s in cluster.servers], cluster.proxy_pids(),
                              args.host)
        result["host"] = args.host or None
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
