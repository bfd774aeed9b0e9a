"""The generic Answer on documentation (``domains.generic.compose``, ``text.entries``).

* a run of option entries is quoted by the entry that answers, with its own flags;
* "the default is X" comes from the setting asked about, not a neighbouring one;
* a command named like a question verb ("find") stays the question's subject;
* a cross-reference ("See ... for an example") is never the Answer;
* a statement that only echoes the question's words (a name line) is not the Answer;
* asked how (or which option), the command or option entry that gives the way leads;
* asked how, a sentence that only says what is done runs on to the command its paragraph shows;
* a description is about what the cross-reference after it names ("See 'incsearch'."), and
  asked what a thing does, an example of switching it on is no Answer;
* a comparison of two names ("the difference between X and Y") quotes each one's own statement;
* each sentence carries its own sources' markers, before its full stop;
* a description whose flags were read as the heading above it gets them back (evidence).
"""

from __future__ import annotations

from test_domains import _write_task

from deepresearch.providers.llm.evidence import evidence_units
from deepresearch.providers.llm.extractive import answer_write

OPTIONS = (
    "-n, --quiet suppress automatic printing of pattern space -e script, --expression=script "
    "add the script to the commands to be executed -i[SUFFIX], --in-place[=SUFFIX] edit files "
    "in place (makes backup if SUFFIX supplied)"
)
SETTINGS = (
    '-s, --signal string Signal to send to the container (default "KILL") -t, --time int '
    "Seconds to wait for stop before killing it (default 10)"
)


def test_a_definition_list_is_quoted_by_the_entry_that_answers_with_its_flags() -> None:
    task = _write_task("How do I edit files in place?", [(OPTIONS, "doc:stream.pdf", "generic")])
    answer = answer_write(task).answer
    assert answer.startswith("-i[SUFFIX], --in-place[=SUFFIX] edit files in place"), answer
    assert "--expression" not in answer and "pattern space" not in answer, answer


def test_a_default_is_quoted_from_its_own_setting() -> None:
    task = _write_task(
        "How many seconds does it wait before killing by default?",
        [(SETTINGS, "doc:stop.md", "generic")],
    )
    answer = answer_write(task).answer
    assert "(default 10)" in answer and "KILL" not in answer, answer


def test_a_command_named_like_a_question_verb_stays_the_subject() -> None:
    from deepresearch.domains.generic.compose import subject_words

    assert "find" in subject_words("What does the -L option of find do?")
    found = [
        (
            "-L, --dereference show information for the file a link references",
            "doc:list.pdf",
            "generic",
        ),
        ("-L Follow symbolic links when examining files.", "doc:find.pdf", "generic"),
    ]
    task = _write_task("What does the -L option of find do?", found)
    answer = answer_write(task).answer
    assert "Follow symbolic links" in answer and "dereference" not in answer, answer


def test_a_cross_reference_is_never_the_answer() -> None:
    found = [
        (
            "See Widget sizes should be kept small for an example of when this is used.",
            "doc:ch-widgets.html",
            "generic",
        ),
        (
            "Widget sizes should be kept small because every copy is held in memory.",
            "doc:ch-widgets.html",
            "generic",
        ),
    ]
    task = _write_task("Why should widget sizes be kept small?", found)
    answer = answer_write(task).answer
    assert "held in memory" in answer and not answer.startswith("See "), answer


def test_prose_is_not_cut_at_flags_it_mentions() -> None:
    from deepresearch.domains.generic.compose import statements

    text = "If you want to search for links when -L is in effect, use -xtype instead."
    assert statements(text) == [text]


def test_a_description_gets_back_the_flags_read_as_its_heading() -> None:
    page = (
        "OPTIONS\nRemove (unlink) the FILE(s).\n\n-f, --force\n"
        "ignore nonexistent files and arguments, never prompt\n-i     prompt before every removal\n"
    )
    units = evidence_units(
        "Which option of remove ignores nonexistent files and never prompts?",
        [(1, "file:///docs/remove.pdf", page)],
    )
    assert any(u.text.startswith("-f, --force ignore nonexistent files") for u in units), units


def test_an_item_the_question_quotes_leads_and_each_sentence_is_cited() -> None:
    found = [
        (
            "The search commands share one history. There you type the search pattern.",
            "doc:usr_04.txt",
            "generic",
        ),
        (
            'Position the cursor on the word and use the "*" command. Vim will grab the word '
            "under the cursor and use it as the search string.",
            "doc:usr_03.txt",
            "generic",
        ),
    ]
    task = _write_task('What does the "*" command search for?', found)
    answer = answer_write(task).answer
    assert answer.startswith('Position the cursor on the word and use the "*" command [2].')
    assert "word under the cursor and use it as the search string [2]." in answer, answer
    assert "history" not in answer, answer


def test_a_lead_in_whose_example_the_finding_lacks_does_not_lead() -> None:
    """ "you can change the extension:" with its example cut off answers nothing by itself: the
    sentence that holds the way to do it leads."""
    found = [
        (
            "If you do not like the backup files ending with a tilde, you can change the"
            " backup file extension:",
            "doc:backup.txt",
            "generic",
        ),
        (
            "The backupext option changes the extension of the backup file, for example to .bak.",
            "doc:options.txt",
            "generic",
        ),
    ]
    task = _write_task("How do I change the backup file extension?", found)
    answer = answer_write(task).answer
    assert answer.startswith("The backupext option"), answer


def test_a_name_line_that_echoes_the_question_does_not_answer_it() -> None:
    """A man page's name line shares every word of the question and so outscores the entry that
    answers; it says nothing the reader did not ask."""
    found = [
        ("tr - translate or delete characters.", "doc:tr.pdf", "generic"),
        (
            "-d, --delete delete characters in SET1, do not translate -s, --squeeze-repeats "
            "replace each sequence of a repeated character with a single occurrence",
            "doc:tr.pdf",
            "generic",
        ),
    ]
    task = _write_task("How do I delete characters with tr instead of translating them?", found)
    answer = answer_write(task).answer
    assert answer.startswith("-d, --delete delete characters in SET1"), answer
    assert "translate or delete characters" not in answer, answer


def test_a_how_to_question_is_answered_by_the_option_that_does_it() -> None:
    """Asked how, the entry giving the way leads, over a sentence on the same words that gives
    none (it scores higher on them: "remove all unused networks")."""
    found = [
        (
            "Remove all unused networks, those which no container references.",
            "doc:network_prune.md",
            "generic",
        ),
        ("-f, --force remove without a prompt for confirmation", "doc:network_prune.md", "generic"),
    ]
    task = _write_task("How do I remove all unused networks without a prompt?", found)
    answer = answer_write(task).answer
    assert answer.startswith("-f, --force remove without a prompt"), answer


def test_each_sentence_of_a_two_source_answer_carries_its_own_marker() -> None:
    """The verifier reads a marker with the sentence it is in: after the full stop it would be
    the next sentence's ("X. [1] Y. [2]" checks Y against source 1)."""
    from deepresearch.text.sentences import split_sentences

    found = [
        ("The 'autowrite' option writes a changed file before leaving it.", "doc:a.txt", "generic"),
        (
            "The 'autoread' option reads a file again when it changed outside.",
            "doc:b.txt",
            "generic",
        ),
    ]
    task = _write_task("What is the difference between 'autowrite' and 'autoread'?", found)
    answer = answer_write(task).answer
    assert split_sentences(answer) == [
        "The 'autowrite' option writes a changed file before leaving it [1].",
        "The 'autoread' option reads a file again when it changed outside [2].",
    ], answer


def test_a_how_to_answer_runs_on_to_the_way_its_paragraph_shows() -> None:
    """Asked how, the best sentence may only say what is done ("You can do this by saving your
    editing session"): the Answer runs on through its finding to the command that does it,
    past sentences that share no word with the question. Asked what, it does not."""
    finding = (
        "You can do this by saving your editing session and restoring it the next day. This "
        "includes things such as the file list and window layout. Exactly what is remembered is "
        "up to you. Type this: `:mksession vimbook.vim`"
    )
    found = [(finding, "doc:usr_21.txt", "generic")]
    task = _write_task("How do I save the current editing session and restore it later?", found)
    answer = answer_write(task).answer
    assert answer.startswith("You can do this by saving your editing session"), answer
    assert "`:mksession vimbook.vim`" in answer, answer
    task = _write_task("What is saved with the current editing session?", found)
    assert ":mksession" not in answer_write(task).answer


def test_a_description_is_about_what_the_cross_reference_after_it_names() -> None:
    """Documentation names what a description is about in the pointer after it ("See
    'incsearch'."): the pointer stays with its sentence as a unit (alone it is too short to be
    one, so the description would lose its subject), and the Answer to "what does it do" is the
    description, not an example of switching it on."""
    from deepresearch.text.sentences import build_units

    page = (
        "For example, if you want Vim to always start with the 'incsearch' option on, add this\n"
        "line to your vimrc file: >\n\n\tset incsearch\n\n"
        "Display the match for a search pattern when halfway typing it.  See 'incsearch'.\n"
    )
    texts = [u.text for u in build_units([(1, page)])]
    assert (
        "Display the match for a search pattern when halfway typing it. See 'incsearch'." in texts
    )
    found = [
        (texts[0], "doc:usr_05.txt", "generic"),
        (
            "Display the match for a search pattern when halfway typing it. See 'incsearch'.",
            "doc:usr_05.txt",
            "generic",
        ),
        *(
            (f"The '{name}' option {does}.", "doc:options.txt", "generic")
            for name, does in [("hlsearch", "highlights matches"), ("wrap", "wraps long lines")]
        ),
        ("Many options also have a short name.", "doc:options.txt", "generic"),
        ("You can change the value of an option.", "doc:options.txt", "generic"),
        ("The option has now been switched off.", "doc:options.txt", "generic"),
    ]
    answer = answer_write(_write_task("What does the 'incsearch' option do?", found)).answer
    assert answer.startswith("Display the match for a search pattern"), answer
    # asked how, the example that shows the way still leads
    how = answer_write(_write_task("How do I switch the 'incsearch' option on?", found)).answer
    assert how.startswith("For example, if you want Vim"), how


def test_a_comparison_quotes_what_is_said_of_each_side_alone() -> None:
    """ "The difference between X and Y" names two fields without quotes: each side's own
    statement is quoted, not only the best one that lists both with others."""
    found = [
        (
            "The Build-Depends, Build-Depends-Indep and Build-Depends-Arch fields declare build "
            "relationships, and the difference between them matters for the autobuilders.",
            "doc:relationships.html",
            "generic",
        ),
        (
            "Build-Depends-Arch must be satisfied when the build-arch target is invoked.",
            "doc:relationships.html",
            "generic",
        ),
        (
            "Build-Depends-Indep must be satisfied when the build-indep target is invoked.",
            "doc:relationships.html",
            "generic",
        ),
    ]
    question = "What is the difference between Build-Depends-Arch and Build-Depends-Indep?"
    answer = answer_write(_write_task(question, found)).answer
    assert "the build-arch target" in answer and "the build-indep target" in answer, answer
