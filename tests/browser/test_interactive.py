"""The parts of a page that respond to the reader without a kernel: explorers and quizzes.

Each is tested twice: on a page of its own that the test writes (so it is covered before any chapter
uses it), and on every page of the built site that shows it.
"""

from __future__ import annotations

import pytest

import posenc
import posenc.book.quiz
import posenc.book.explorers
from tests.browser import helpers
from tests.browser import drive
from tests.browser.drive import check_circle, check_heatmap, check_quiz
from tests.browser.test_pages import by_page


def test_heatmap_explorer_redraws_as_the_sliders_move(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "heatmap", posenc.book.explorers.heatmap_explorer(element_id="hm"))
    check_heatmap(tab, "#hm")
    helpers.screenshot(tab, "#hm", "explorer-heatmap")
    assert tab.eval_on_selector("#hm output.posenc-heatmap-d-value", "o => o.value") != ""
    assert not tab.errors, tab.errors


def test_two_explorers_on_one_page_do_not_interfere(scratch_url, new_page):
    first, second = posenc.book.explorers.heatmap_explorer(element_id="one"), posenc.book.explorers.heatmap_explorer(element_id="two")
    tab = helpers.open_standalone(scratch_url, new_page, "two-heatmaps", first, second)
    untouched = drive.canvas_picture(tab, "#two")
    drive.move(tab, "#one input.posenc-heatmap-d", "ArrowLeft")
    assert drive.canvas_picture(tab, "#two") == untouched
    assert drive.heatmap_state(tab, "#one") != drive.heatmap_state(tab, "#two")
    assert not tab.errors, tab.errors


def test_unit_circle_point_turns_as_the_position_moves(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "circle",
                           posenc.book.explorers.unit_circle_explorer(d_model=16, pair=1, shift=4, element_id="uc"))
    check_circle(tab, "#uc")
    shift = tab.locator("#uc input.posenc-circle-shift")
    shift.focus()
    shift.press("ArrowRight")
    assert drive.circle_state(tab, "#uc")["shift"] == 5
    drive.assert_circle_matches_reference(drive.circle_state(tab, "#uc"))
    helpers.screenshot(tab, "#uc", "explorer-unit-circle")
    assert not tab.errors, tab.errors


@pytest.mark.parametrize("chapter", posenc.book.quiz.chapters())
def test_quiz_answers_right_and_wrong_clicks(chapter, scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, f"quiz-{chapter}", posenc.book.quiz.html(chapter))
    check_quiz(tab, f"#posenc-quiz-{chapter}", posenc.book.quiz.load(chapter))
    if chapter == posenc.book.quiz.chapters()[0]:
        helpers.screenshot(tab, f"#posenc-quiz-{chapter}", "quiz")
    assert not tab.errors, tab.errors


# The same on the pages of the built site: pageview.inspect_page drives them once per page.


@by_page
def test_interactive_parts_of_the_page_respond(page, report_of):
    report = report_of(page)
    if not report.interactions:
        pytest.skip(f"{page} has no explorer or quiz")
    problems = [f"#{element_id}: {problem}" for element_id, problem in report.interactions if problem]
    assert not problems, f"{page}:\n" + "\n".join(problems)
    assert not report.interaction_errors, f"{page}: errors while using the page: {report.interaction_errors}"
