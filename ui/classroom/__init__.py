"""A class: a teacher leads, every student's browser follows (issue 33).

The teacher starts a class from the sidebar and gets a short code and a join link
(``?class=CODE``, also as a QR code). After each of the teacher's runs the view they see (page,
document, k, trigram blocking, weights, the shown page's controls (ui.view), the lesson step) is written
to the shared store; its ``version`` goes up only when something changed, and goes to a tiny
static file too. A student's browser reads that file every second (every half second behind
scripts/serve.py, where nginx serves it); when the number moves, the student's session takes the
teacher's view (the document from the store, the result from the server's shared cache: it
arrives through ui.arrival, as any view does) and reruns on the teacher's page. Nothing re-runs while nothing changes. The store is the only
channel between processes, so students and teacher may be on different app processes
(scripts/serve.py, nginx) or machines (PostgreSQL; each process copies live classes' versions to
its static files). A student can leave to explore and come back. A class plays a tour (ui.tour:
a lesson file in lessons/ or a story made in the app), stepped with Back/Next (ui.player), alone or for a class.

Who may lead (docs/security.md): one session leads a class at a time, the one that started it or
last resumed it with its resume key (a new key at every resume); the store refuses the others'
writes. Wrong passwords and keys are counted per client in the store, never per class.

Settings (environment): MICROSCOPE_TEACHER_PASSWORD (without it anyone may start a class),
MICROSCOPE_CLASS_HOURS (how long a join link works, default 12), MICROSCOPE_PROXY_SECRET (given by
scripts/serve.py: only a request carrying it may name its client's address).
The package: ``store`` (the class in the shared store: versions, attendance, who leads, the
throttle, the version files; no Streamlit), ``session`` (this browser session: its keys, who is
asking), ``lead`` (the teacher's panel), ``follow`` (a student's), ``steps`` (a lesson's Back/Next
and its text above the page), ``answers`` (seats, answers and reveals in the store; no
Streamlit), ``asking`` (the question under the step: a student's answer, the teacher's live chart,
Reveal, CSV), ``check`` (the lesson checker's command line), ``homework`` (a lesson assigned as
homework), ``warm`` (a lesson's steps computed ahead), ``address`` (the links students open), ``teacher`` (the
teacher link that replaces a password on a school's network). Below it: ui.tour (the tour and its lesson
files) and ui.questions (what a question takes, checked). The names app.py and the
tests use are here.
"""
from __future__ import annotations

from ui.classroom.asking import question_panel  # noqa: F401
from ui.classroom.follow import catch_up, explored, follow, join_from_url, status, warm_followed  # noqa: F401
from ui.classroom.join import JOIN_SCREEN, join_screen  # noqa: F401
from ui.classroom.lead import (led_elsewhere_banner, publish_mine, resume_from_cookie,  # noqa: F401
                               teacher_bar, teacher_panel)
from ui.classroom.session import (APPLIED, ELSEWHERE, FOLLOWING, JOINED, LEADER, MOVED, PAGE,  # noqa: F401
                                  RESUME, SESSION, STEP, TEACHING)
from ui.classroom.steps import choice_hidden, lesson_panel, private_note, read_link, step_text  # noqa: F401
from ui.classroom.store import *  # noqa: F401,F403
from ui.classroom.teacher import from_url as teacher_from_url  # noqa: F401
