"""The model-free planner's decomposition: whole questions, or the question kept whole with why."""

from __future__ import annotations

import pytest

from deepresearch.providers.llm.decomposition import decompose

SPLITS = [
    (  # two periods: the measure stays, the bare year takes the first period's date
        "What were Initech's net sales for the quarters ended March 31, 2024 and 2023?",
        "periods",
        (
            "What were Initech's net sales for the quarter ended March 31, 2024?",
            "What were Initech's net sales for the quarter ended March 31, 2023?",
        ),
    ),
    (  # two options of one command: the head noun and the verb agree with one
        "What do the -f and -x options of tar do?",
        "items",
        ("What does the -f option of tar do?", "What does the -x option of tar do?"),
    ),
    (
        "What are the default values of max_connections, shared_buffers and work_mem?",
        "items",
        (
            "What are the default values of max_connections?",
            "What are the default values of shared_buffers?",
            "What are the default values of work_mem?",
        ),
    ),
    (  # entities x periods
        "What were Initech's and Globex's revenues in 2022 and 2023?",
        "entities",
        (
            "What were Initech's revenues in 2022?",
            "What were Initech's revenues in 2023?",
            "What were Globex's revenues in 2022?",
            "What were Globex's revenues in 2023?",
        ),
    ),
    ("Compare Initech and Globex.", "comparison", ("What is Initech?", "What is Globex?")),
    (
        "Compare the startup time of bash and zsh.",
        "comparison",
        ("What is the startup time of bash?", "What is the startup time of zsh?"),
    ),
    (
        "Compare Initech's net income with Globex's in 2022",
        "comparison",
        ("What was Initech's net income in 2022?", "What was Globex's net income in 2022?"),
    ),
    (
        "What is the difference between a hard link and a symbolic link?",
        "comparison",
        ("What is a hard link?", "What is a symbolic link?"),
    ),
    (
        "What are the differences between Ray and Dask for distributed training?",
        "comparison",
        ("What is Ray for distributed training?", "What is Dask for distributed training?"),
    ),
    ("Which is faster, gzip or xz?", "comparison", ("How fast is gzip?", "How fast is xz?")),
    (
        "Which is more secure, ssh or telnet?",
        "comparison",
        ("How secure is ssh?", "How secure is telnet?"),
    ),
    (
        "How did revenue in 2023 compare to 2022?",
        "comparison",
        ("What was revenue in 2023?", "What was revenue in 2022?"),
    ),
    (  # a coordinated subject keeps its verb in agreement, and "their" becomes "its"
        "How did Initech and Globex revenue compare in their latest 10-Q?",
        "comparison",
        (
            "What was Initech revenue in its latest 10-Q?",
            "What was Globex revenue in its latest 10-Q?",
        ),
    ),
    (
        "How do Initech and Globex report revenue?",
        "entities",
        ("How does Initech report revenue?", "How does Globex report revenue?"),
    ),
    (  # a plural noun is whole by itself: the words after "and" are the right one's own
        "What were the revenues and operating expenses of Initech in Q3 2023?",
        "items",
        (
            "What were the revenues of Initech in Q3 2023?",
            "What were the operating expenses of Initech in Q3 2023?",
        ),
    ),
    (
        "What is the maximum size of a BLOB and a TEXT column?",
        "items",
        (
            "What is the maximum size of a BLOB column?",
            "What is the maximum size of a TEXT column?",
        ),
    ),
    (
        "How do I configure logging and rotate the log files?",
        "items",
        ("How do I configure logging?", "How do I rotate the log files?"),
    ),
    (  # the words before coordinated nouns are shared; the question keeps its opening
        "Has Initech announced any major new company acquisitions or sell-offs in these reports?",
        "items",
        (
            "Has Initech announced any major new company acquisitions in these reports?",
            "Has Initech announced any major new sell-offs in these reports?",
        ),
    ),
    (  # a participle after the nouns is said of both
        "Are there any legal proceedings or risks disclosed in the report?",
        "items",
        (
            "Are there any legal proceedings disclosed in the report?",
            "Are there any risks disclosed in the report?",
        ),
    ),
]

SPLITS += [
    (  # a period without a year takes its sibling's
        "What was revenue in Q1 and Q2 2023?",
        "periods",
        ("What was revenue in Q1 2023?", "What was revenue in Q2 2023?"),
    ),
    (  # a quantifier is shared like an article
        "How many tables and indexes can a database hold?",
        "items",
        ("How many tables can a database hold?", "How many indexes can a database hold?"),
    ),
    (  # phrases alike word for word: what follows is said of both
        "Does the -r flag or the -R flag copy directories recursively?",
        "items",
        (
            "Does the -r flag copy directories recursively?",
            "Does the -R flag copy directories recursively?",
        ),
    ),
]

SPLITS += [
    (  # a shared object after coordinated verbs is each verb's
        "How do I install and configure nginx?",
        "items",
        ("How do I install nginx?", "How do I configure nginx?"),
    ),
    (  # a shared head noun after coordinated modifiers is each modifier's
        "What were its marketing and advertising expenses in 2023?",
        "items",
        (
            "What were its marketing expenses in 2023?",
            "What were its advertising expenses in 2023?",
        ),
    ),
    (
        "How are the upper and lower bounds computed?",
        "items",
        ("How are the upper bounds computed?", "How are the lower bounds computed?"),
    ),
    (  # an adverb after the conjuncts is said of both
        "How do I change the permissions of files and directories recursively?",
        "items",
        (
            "How do I change the permissions of files recursively?",
            "How do I change the permissions of directories recursively?",
        ),
    ),
]

WHOLE = [
    ("How much did Initech spend on research and development in 2023?", "one name"),
    ("What did Procter and Gamble report as revenue in 2023?", "one name"),
    ("What are the terms and conditions of the license?", "one name"),
    ("How and why does the scheduler preempt tasks?", "clauses"),
    ("What does the -v option do and when should it be used?", "clauses"),
    ("What is the relationship between latency and throughput?", "relation"),
    (
        "What relationship can be seen between R&D spending and the introduction of new chips?",
        "relation",
    ),
    ("Which segments like cloud, retail and others grew fastest?", "examples"),
    ("What risk factors were outlined, particularly any new or escalating risks?", "examples"),
    ("What is the default value of the timeout setting?", "one thing"),
    (
        "In the latest 10-Q, how does the revenue from Initech's new product launches compare "
        "with its sales?",
        "relation",
    ),
    (
        "Outline the risks of Initech's business and the evolution of these risks.",
        "different shapes",
    ),
    # a bare noun beside a longer phrase: its head may be shared or not
    ("What were the revenue and operating income of Initech in Q3 2023?", "may share 'income'"),
    ("What are the new and deprecated options?", "may share 'options'"),
    ("How do I install the package and configure it?", "refers back"),
    ("Which commands open and close a fold?", "subject is not told"),
    ("Which command writes the file and exits the editor?", "subject is not told"),
]


@pytest.mark.parametrize(("question", "kind", "parts"), SPLITS)
def test_a_question_about_two_things_splits_into_whole_questions(
    question: str, kind: str, parts: tuple[str, ...]
) -> None:
    split = decompose(question, 4)
    assert split.parts == parts, split
    assert split.split == kind and not split.whole and not split.reason


@pytest.mark.parametrize(("question", "why"), WHOLE)
def test_a_name_a_clause_a_relation_or_examples_stay_whole_and_say_why(
    question: str, why: str
) -> None:
    split = decompose(question, 4)
    assert split.whole and split.parts == () and split.split is None, split
    assert why in split.reason, split.reason


def test_more_parts_than_the_plan_allows_split_on_the_outer_coordination_alone() -> None:
    question = "What were Initech's and Globex's revenues in 2022 and 2023?"
    split = decompose(question, 3)
    assert split.parts == (
        "What were Initech's revenues in 2022 and 2023?",
        "What were Globex's revenues in 2022 and 2023?",
    )
    assert decompose(question, 1).whole and "2 parts" in decompose(question, 1).reason
    assert decompose("", 4).reason == "the question is empty"


def test_a_longer_list_than_the_plan_allows_is_grouped_so_every_thing_is_asked() -> None:
    # before: five compared things in a plan of three stayed whole, and deep ran as quick
    question = "Compare ACME sales, Globex revenue, ACME dividend, Globex expansion and ACME plants"
    split = decompose(question, 3)
    assert split.parts == (
        "What are ACME sales and Globex revenue?",
        "What are ACME dividend and Globex expansion?",
        "What are ACME plants?",
    )
    split = decompose("What do the -a, -b, -c, -d and -e options do?", 3)
    assert split.parts == (
        "What do the -a and -b options do?",
        "What do the -c and -d options do?",
        "What does the -e option do?",
    )
    assert len(decompose(question, 5).parts) == 5


# Generated questions about two things, each with what both things share: a verb's object, a
# head noun, a tool, a measure. Every part must hold it and read as a question.
_OPENERS = ("How do I", "How can I", "How do you", "How to")
_VERBS = (
    ("install", "configure"), ("start", "stop"), ("create", "delete"), ("enable", "disable"),
    ("back up", "restore"), ("list", "remove"), ("read", "parse"), ("mount", "unmount"),
)  # fmt: skip
_OBJECTS = ("the server", "a branch", "environment variables", "JSON files", "widgetd", "it all")
_MODIFIERS = (
    ("marketing", "advertising"), ("input", "output"), ("domestic", "international"),
    ("annual", "quarterly"), ("primary", "secondary"), ("minimum", "maximum"),
    ("deferred", "current"), ("new", "deprecated"), ("read", "write"), ("client", "server"),
    ("revenue", "operating"), ("debt", "interest"), ("short", "long"),
)  # fmt: skip
_HEADS = ("expenses", "formats", "values", "settings", "income", "margin")
_HEAD_FRAMES = (
    "What were its {a} and {b} {head} in 2023?",
    "What are the {a} and {b} {head} of the tool?",
    "How are the {a} and {b} {head} computed?",
    "Which {a} and {b} {head} does the manual list?",
)


def _generated() -> list[tuple[str, str, bool]]:
    """(question, what every part holds, whether it must split)."""
    out = []
    for opener in _OPENERS:
        for a, b in _VERBS:
            for obj in _OBJECTS:
                must = obj != "it all"  # "it" refers back: not each a whole question
                out.append((f"{opener} {a} and {b} {obj}?", obj.split()[-1], must))
                out.append((f"{opener} {a} and {b} {obj} on boot?", "on boot", must))
    for frame in _HEAD_FRAMES:
        for a, b in _MODIFIERS:
            for head in _HEADS:
                out.append((frame.format(a=a, b=b, head=head), head, False))
    for opts in (("-f", "-x"), ("--all", "--quiet"), ("-r", "-R", "-v")):
        listed = ", ".join(opts[:-1]) + " and " + opts[-1]
        out.append((f"What do the {listed} options of packtool do?", "does the -", True))
    for periods in (("2022", "2023"), ("Q1", "Q2 2023"), ("March 31, 2024", "2023")):
        out.append(
            (f"What was the net revenue in {periods[0]} and {periods[1]}?", "net revenue", True)
        )
    for a, b in (("Initech's", "Globex's"), ("Acme's", "Umbrella's")):
        out.append(
            (f"What were {a} and {b} operating expenses in 2023?", "operating expenses", True)
        )
    return out


@pytest.mark.parametrize(("question", "shared", "must_split"), _generated())
def test_every_part_holds_what_the_conjuncts_share_or_the_question_stays_whole(
    question: str, shared: str, must_split: bool
) -> None:
    split = decompose(question, 4)
    assert split.parts or split.reason, split
    assert not must_split or split.parts, split
    for part in split.parts:
        assert shared in part and part.endswith("?") and part[0].isupper(), split
        assert len(part.split()) >= 4, split
