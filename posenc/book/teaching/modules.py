"""Module plans: which lectures go in which week, a lecturer's choice written here and checked against the toc.

A plan covers the chapters of its parts of ``_toc.yml`` (Part I; Parts I and II), each chapter exactly once
and in the order of the toc (``module_problems``), so a chapter added to the toc fails the tests until a plan
gives it a week. A chapter being written (``FORTHCOMING``) may be given its week before it lands; the plan
leaves it out while the toc has no such chapter. Besides chapters a week may hold a session of another kind
(``SESSIONS``). The guide shows a plan with the student's time outside class for each week, from the estimates
of ``posenc.book.teaching.estimates``. What a plan's heading and advice say of its chapters, its topics and its
sessions a week is built from the weeks it shows (``ModulePlan.weeks_now``), so it stays true while a chapter
is forthcoming and once it lands.
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc.book.teaching.entry import LECTURE_MINUTES
from posenc.book.teaching.estimates import (duration, exercise_minutes, parts, reading_minutes, runs, table_cell,
                                            title)
from posenc.lib.reproducibility import listed

__all__ = ["FORTHCOMING", "MODULE_PLANS", "SESSIONS", "TOPICS", "ModulePlan", "module_plan_lead",
           "module_plan_markdown", "module_problems"]

# Sessions other than a chapter's lecture that a week may hold, and what the table says of them.
SESSIONS = {
    "review": "Review: the module's exam questions (this guide) as practice, in pairs, then together",
}
# What a plan's advice calls each chapter it names among its topics.
TOPICS = {
    "ch05": "relative biases", "ch06": "rotary embeddings", "ch07": "the length-generalisation benchmark",
    "ch08": "real text", "ch09": "the rotary variants of today's models",
    "ch10": "position in two and three dimensions",
}
# Chapters being written, which a plan may already give a week: left out while the toc has no such chapter.
FORTHCOMING: tuple[str, ...] = ()


@dataclass
class ModulePlan:
    title: str
    parts: int                   # the plan covers the first `parts` parts of the toc
    weeks: list[list[str]]       # chapter ids ("ch05") and sessions ("review"), in order
    note: str                    # the lecturer's advice, shown under the title; "{topics}" lists the chapters
    #                              named in TOPICS that the plan shows, "{rhythm}" its sessions a week

    def weeks_now(self) -> list[list[str]]:
        """The weeks with the forthcoming chapters that the toc does not have yet left out."""
        in_toc = {set_id for part in parts() for set_id in part}
        return [[item for item in week if item in in_toc or item not in FORTHCOMING] for week in self.weeks]

    def chapters(self) -> list[str]:
        return [item for week in self.weeks_now() for item in week if item not in SESSIONS]


MODULE_PLANS = {
    "2-week": ModulePlan(
        "Two weeks, Part I only", 1,
        [["ch00", "ch01", "ch02"], ["ch03", "ch04"]],
        "The foundations, from why attention needs positions to the learned-against-sinusoidal experiment. The "
        "load is heavy: a lab session each week where students start the exercises with help keeps it "
        "manageable. {rhythm}"),
    "6-week": ModulePlan(
        "Six weeks, Parts I and II", 2,
        [["ch00", "ch01"], ["ch02", "ch03"], ["ch04", "ch05"], ["ch06", "ch07"], ["ch08", "ch09"], ["ch10", "review"]],
        "Part I, then {topics}. {rhythm}"),
}


def module_problems(name: str) -> list[str]:
    """How the plan disagrees with the toc (empty when it covers its parts' chapters once each, in order)."""
    plan = MODULE_PLANS[name]
    expected = [set_id for part in parts()[:plan.parts] for set_id in part]
    got = plan.chapters()
    unknown = [item for week in plan.weeks_now() for item in week if item not in SESSIONS and item not in expected]
    problems = []
    if got != expected:
        problems.append(f"the {name} plan lists the chapters {got}; its parts of _toc.yml have {expected}, each "
                        "once and in this order (give a new chapter a week in posenc/book/teaching/modules.py)")
    if unknown:
        problems.append(f"the {name} plan names {unknown}, neither a chapter of its parts nor a session "
                        f"({sorted(SESSIONS)})")
    if any(not week for week in plan.weeks_now()):
        problems.append(f"the {name} plan has an empty week")
    return problems


def _span(chapters: list[str]) -> str:
    """'chapters 0 to 8 and 10': the numbers of the chapters shown, in runs."""
    numbers = [int(set_id[2:]) for set_id in chapters]
    return "chapters " + listed([f"{run[0]} to {run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs(numbers)])


NUMBER_WORDS = ("no", "one", "two", "three", "four", "five")


def _sessions(items: list[str]) -> str:
    """'chapters 3 and 4', 'chapter 8', 'chapter 10 and the review'."""
    chapters = [str(int(item[2:])) for item in items if item not in SESSIONS]
    named = [f"chapter{'s' if len(chapters) > 1 else ''} {listed(chapters)}"] if chapters else []
    return listed(named + [f"the {item}" for item in items if item in SESSIONS])


def _count(n: int) -> str:
    return f"{NUMBER_WORDS[n]} session{'s' if n != 1 else ''}"


def _rhythm(weeks: list[list[str]]) -> str:
    """The plan's sessions a week, with the weeks that have fewer, and where its last week's exercise sets fall
    due, from the weeks shown."""
    counts = [len(week) for week in weeks]
    usual = max(sorted(set(counts)), key=counts.count)
    if counts.count(usual) * 2 > len(counts):
        text = f"{_count(usual)} a week"
        other = [(n, week) for n, week in enumerate(weeks, 1) if len(week) != usual]
        if other:
            text += ", except " + listed([f"week {n}, which has {NUMBER_WORDS[len(week)]} ({_sessions(week)})"
                                           for n, week in other])
        if any(len(week) < usual for _, week in other):
            text += ": use the free slot for a lab where students start the exercises with help, or to catch up"
    else:
        text = listed([f"{_count(len(week))} in week {n}" for n, week in enumerate(weeks, 1)])
    text = text[0].upper() + text[1:]
    last = weeks[-1]
    if "review" in last:
        text += "; the last week ends with a review on the exam questions"
    chapters = [item for item in last if item not in SESSIONS]
    if chapters:
        sets = f"the exercise set{'s' if len(chapters) > 1 else ''} of week {len(weeks)} ({_sessions(chapters)})"
        text += (f". With a deadline a week after each lecture, {sets} would fall due after the module has "
                 f"ended: set {'those deadlines' if len(chapters) > 1 else 'that deadline'} at the module's end (and "
                 f"start {'the sets' if len(chapters) > 1 else 'the set'} in class), or a week after it")
    return text + "."


def module_plan_lead(name: str) -> str:
    """The plan's title, the chapters it shows and its advice, all from the weeks it shows."""
    plan = MODULE_PLANS[name]
    chapters = plan.chapters()
    topics = listed([TOPICS[i] for i in chapters if i in TOPICS]) if any(i in TOPICS for i in chapters) else ""
    note = plan.note.format(topics=topics, rhythm=_rhythm(plan.weeks_now()))
    return (f"**{plan.title}** ({_span(chapters)}: {len(chapters)} lectures of {LECTURE_MINUTES} minutes in "
            f"{len(plan.weeks_now())} weeks). {note}")


def module_plan_markdown(name: str) -> str:
    """The plan's title and advice, then one row per week with its sessions and the student's time outside
    class (reading and exercises)."""
    problems = module_problems(name)
    if problems:
        raise ValueError("; ".join(problems))
    plan = MODULE_PLANS[name]
    chapters = plan.chapters()
    lead = module_plan_lead(name)
    rows = ["| Week | Sessions | Student's time outside class: reading + exercises |", "| --- | --- | --- |"]
    total = 0
    for week, items in enumerate(plan.weeks_now(), start=1):
        sessions = "; ".join(SESSIONS[i] if i in SESSIONS else f"{int(i[2:])}. {table_cell(title(i))}" for i in items)
        minutes = sum(reading_minutes(i) + exercise_minutes(i) for i in items if i not in SESSIONS)
        total += minutes
        rows.append(f"| {week} | {sessions} | {f'about {duration(minutes)}' if minutes else '–'} |")
    rows.append(f"| All | {len(chapters)} lectures | about {duration(total)} |")
    return "\n".join([lead, "", *rows])
