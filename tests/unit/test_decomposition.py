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
    (
        "What were the revenue and operating income of Initech in Q3 2023?",
        "items",
        (
            "What was the revenue of Initech in Q3 2023?",
            "What was the operating income of Initech in Q3 2023?",
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


def test_more_parts_than_the_plan_allows_keep_the_question_whole() -> None:
    question = "What were Initech's and Globex's revenues in 2022 and 2023?"
    split = decompose(question, 3)
    assert split.whole and "4 parts" in split.reason
    assert decompose("", 4).reason == "the question is empty"
