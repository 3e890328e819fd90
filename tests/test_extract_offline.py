"""The offline extractor: concrete keep/drop behaviours, verbatim output, categories, and a regression floor
on the hand-labelled set (``benchmarks/data/extraction_labelled.jsonl``, measured by ``benchmarks/extractor.py``)."""

from __future__ import annotations

import pytest

from conftest import REPO, load_script
from suzent_cli.capture.extract.offline import OfflineExtractor, categorize
from suzent_cli.capture.extract.turns import Message, Turn, parse_turn, split_pasted

# Measured 2026-11-29: labelled set P 0.991 / R 0.991; held-out set P 1.000 / R 0.950. Re-measured for issue 13
# (update labels, pasted prompts added to both sets): labelled 0.992 / 0.992, held-out 1.000 / 0.963. Issue 16
# (lead-ins, "I see" habits, subject-less "been …ing", life events; 107 items added to the labelled set only):
# labelled 0.994 / 0.989, held-out 1.000 / 0.963. Issue 27 (habits, standing requests, two-fact sentences; 45
# items added to the labelled set, 20 to the held-out one): labelled 0.990 / 0.995, held-out 1.000 / 0.929. Issue 27's
# trial leftovers (subject-less changes, one more pet; 24 labelled items): labelled 0.991 / 0.995, held-out the same.
# Floors sit a bit below.
PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.93
CATEGORY_FLOOR = 0.90


def _bench():
    return load_script("benchmarks/extractor.py", "extractor_bench")


def facts_of(*user_texts: str, assistant: str | None = None):
    messages = [Message("user", t) for t in user_texts]
    if assistant is not None:
        messages.append(Message("assistant", assistant))
    return OfflineExtractor().extract(Turn(tuple(messages)), [])


def contents(*user_texts: str) -> list[str]:
    return [f.content for f in facts_of(*user_texts)]


@pytest.mark.parametrize("text", [
    "What's the difference between a list and a tuple in Python?",
    "How do I get my Docker container to stop restarting",
    "Is my landlord allowed to keep the deposit?",
    "I was wondering if you could read my cover letter.",
    "Any idea why the build fails only on CI?",
])
def test_questions_are_dropped(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "Write a limerick about my cat.",
    "Please summarise this thread for my manager.",
    "Fix the off-by-one error in my loop.",
    "I need you to find me a hotel in Vienna.",
    "I'd like a recipe with lentils.",
    "Remember to buy milk on the way home.",  # a reminder task, not a fact
])
def test_commands_and_requests_are_dropped(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "Hi there!", "Thanks, that worked.", "ok cool, bye!", "Haha, that's hilarious.", "I see what you mean.",
    "I'll let you know how it goes.", "You're the best.",
])
def test_small_talk_is_dropped(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "I'm tired today.",                                # passing state + today
    "I'm at the airport waiting for my flight.",       # temporary location
    "I had a burrito for lunch.",                      # one-off past event
    "I already tried restarting the router.",          # in-turn report
    "My code throws a KeyError on line 42.",           # problem report
    "My meeting got moved to Thursday.",               # near-term, single weekday
    "If I won the lottery, I'd buy a boat.",           # hypothetical
    "Oh great, I just love it when npm breaks.",       # sarcasm
    "My friend thinks the film was overrated.",        # someone else's passing opinion
    "I'm going to grab a coffee.",                     # immediate, not a goal
])
def test_passing_and_non_durable_statements_are_dropped(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "I live in Rotterdam with my partner.",
    "I don't eat meat.",                              # negations are facts too
    "I'm left-handed.",                               # short, still durable
    "I moved to Leipzig last spring.",                # biographical past
    "We decided to use PostgreSQL for analytics.",
    "Sam is my business partner.",                    # "<someone> is my …"
    "From now on, always answer in metric units.",    # standing instruction
])
def test_durable_first_person_statements_are_kept_whole(text):
    assert contents(text) == [text]


def test_leading_discourse_markers_are_trimmed_not_rewritten():
    assert contents("By the way, my name is Priya.") == ["My name is Priya."]
    assert contents("ok so I want to get better at public speaking.") == ["I want to get better at public speaking."]


@pytest.mark.parametrize(("text", "kept"), [
    ("Hey Claude, I use Neovim for everything.", ["I use Neovim for everything."]),
    ("Hi Sam! My sister is a nurse.", ["My sister is a nurse."]),
    ("Thanks Mel, I have two kids.", ["I have two kids."]),
    ("Hi I'm Sam, a nurse from Leeds.", ["I'm Sam, a nurse from Leeds."]),  # "I'm" is the subject, not a name
    ("So Python, I use it daily.", []),  # only a greeting's addressee is trimmed, not a topic
    ("Hey Mel, how are you?", []),
])
def test_a_greeting_s_addressee_is_not_the_subject(text, kept):
    assert contents(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("Update: I moved, I live in Lisbon now.", "I moved, I live in Lisbon now."),
    ("UPDATE - I now live in Lisbon.", "I now live in Lisbon."),
    ("Small update: I got married last year.", "I got married last year."),
    ("Correction: I live in Porto, not Lisbon.", "I live in Porto, not Lisbon."),
    ("Correction to my last message: my son is seven, not eight.", "My son is seven, not eight."),
    ("Heads up: I switched to Neovim.", "I switched to Neovim."),
    ("Just a heads-up, my wife is pregnant.", "My wife is pregnant."),
    ("Quick note - I am vegetarian.", "I am vegetarian."),
    ("Side note: I'm allergic to nuts.", "I'm allergic to nuts."),
    ("FYI I've relocated to Lisbon.", "I've relocated to Lisbon."),
    ("PS: my daughter is called Ana.", "My daughter is called Ana."),
    ("Edit: we moved our backend to AWS.", "We moved our backend to AWS."),
    ("[Update] I work from home now.", "I work from home now."),
    ("To clarify, I live in Porto.", "I live in Porto."),
    ("One more thing: I have a dog.", "I have a dog."),
    ("Update... I quit my job in 2024.", "I quit my job in 2024."),
])
def test_an_update_label_is_trimmed_and_the_update_kept(text, kept):
    assert contents(text) == [kept]


@pytest.mark.parametrize("text", [
    "Update my address to Lisbon.",  # the verb, no separator: a command
    "Update the README, my changes are in.",
    "Update: the build is failing again.",  # a label, then no fact about the user
    "Quick note: my flight leaves tomorrow.",
    "Heads up, I'm running late.",
])
def test_a_label_does_not_make_a_command_or_a_passing_remark_a_fact(text):
    assert contents(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    # a stance adverb or a discourse link says nothing about the user: trimmed like "btw"
    ("Btw, I use vim now.", "I use vim now."),
    ("Honestly, I prefer tabs.", "I prefer tabs."),
    ("Unfortunately I lost my job at Acme.", "I lost my job at Acme."),
    ("Personally, I drink my coffee black.", "I drink my coffee black."),
    ("Speaking of which, I have two cats.", "I have two cats."),
    ("On another note, my sister lives in Oslo.", "My sister lives in Oslo."),
    # a fronted phrase of time, place or circumstance often carries the when or where: the sentence is kept whole
    ("Since last week, I work from Lisbon.", "Since last week, I work from Lisbon."),
    ("Since last week I work from Lisbon.", "Since last week I work from Lisbon."),
    ("At work we use Postgres.", "At work we use Postgres."),
    ("At work, we use Postgres.", "At work, we use Postgres."),
    ("In my free time, I paint.", "In my free time, I paint."),
    ("Every morning I run 5k.", "Every morning I run 5k."),
    ("Growing up, I spoke Polish at home.", "Growing up, I spoke Polish at home."),
    ("When I was a kid, I lived in Spain.", "When I was a kid, I lived in Spain."),  # "when" is no question here
    ("As a nurse, I work night shifts.", "As a nurse, I work night shifts."),
    ("Recently I switched to neovim.", "Recently I switched to neovim."),
    ("Last year, I moved to Berlin.", "Last year, I moved to Berlin."),
    ("Because of my allergy, I avoid nuts.", "Because of my allergy, I avoid nuts."),
    ("On Sundays I call my grandmother.", "On Sundays I call my grandmother."),
    ("Over the summer, I picked up bouldering.", "Over the summer, I picked up bouldering."),
    ("By the way, since March I've been on a low-sodium diet.", "Since March I've been on a low-sodium diet."),
])
def test_a_lead_in_before_the_user_s_own_clause_keeps_the_fact(text, kept):
    assert contents(text) == [kept]


@pytest.mark.parametrize("text", [
    "Honestly, that was fun.",  # the rest is not about the user
    "Yesterday, I went to the zoo.",  # a here-and-now lead
    "Last week, I went to a concert.",  # a lead does not make a one-off episode durable
    "After the meeting, I had lunch with Sam.",
    "Luckily, I had my umbrella.",
    "Unfortunately, I lost my keys.",
    "If it rains, I stay home.",  # a conditional is a hypothetical, not a lead-in
    "In case I forget, my locker code is 4411.",
    "For now, we keep the dog on a leash.",  # temporary
    "Thanks for the tip, I really appreciate it.",
    "With your help, we can do it.",  # "we can" encourages
    "At the moment, I'm at the airport.",
    "Right now I'm working on a thesis.",
    "Lately, I've been doing great.",  # a passing state behind a lead
    "Personally, I think tabs are better.",  # a hedge behind a lead
    "Now I'm craving pizza.",
    "Since we last spoke, I started teaching people how to make this.",  # "this" points into the conversation
    "Seriously, what was that?",
    "When you get a chance, I'd love your feedback.",  # a request behind a lead-in
    "I picked up the kids from school.",
    "To be honest, I don't really care.",
])
def test_a_lead_in_does_not_make_a_non_fact_a_fact(text):
    assert contents(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("I see my parents once a week.", ["I see my parents once a week."]),
    ("I see them at least once a week.", ["I see them at least once a week."]),
    ("I see.", []),
    ("I see, thanks.", []),
    ("I see what you mean.", []),
    ("I see the problem now.", []),
    ("I see - that makes sense.", []),
    ("I see no reason to change it.", []),
])
def test_i_see_with_an_object_is_a_habit_not_an_acknowledgement(text, kept):
    assert contents(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("Been learning Spanish for a year.", ["Been learning Spanish for a year."]),
    ("Been working at Acme for 3 years.", ["Been working at Acme for 3 years."]),
    ("Recently started learning the cello.", ["Recently started learning the cello."]),
    ("Just started doing aerial yoga, it's great.", ["Just started doing aerial yoga, it's great."]),
    ("Been playing it for a month now.", []),  # "it" points into the conversation
    ("Been reading that book you recommended a while ago.", []),
    ("Been so busy lately.", []),  # a passing state, no "…ing" of its own
    ("Been waiting for an hour.", []),  # no lasting span
    ("Been learning Spanish since yesterday.", []),  # here-and-now
    ("Just started the server.", []),  # not the start of something lasting
])
def test_subject_less_first_person_is_kept_only_in_precise_shapes(text, kept):
    assert contents(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("I lost my job at the bakery.", True),
    ("I got promoted!", True),
    ("We got a puppy last spring.", True),
    ("We bought a house.", True),
    ("I got married.", True),
    ("I lost my keys.", False),  # one-off episodes stay dropped
    ("I got a coffee.", False),
    ("I left my laptop at home.", False),
    ("We even went on another camping trip.", False),  # "even" does not hide the episode
    ("I really liked the movie.", False),
])
def test_life_events_are_biographical_other_past_events_stay_one_off(text, kept):
    assert contents(text) == ([text] if kept else [])


@pytest.mark.parametrize(("text", "kept"), [
    ("Dance is pretty much my go-to for stress relief.", True),
    ("Blue's my favourite colour.", True),
    ("Sam's my brother.", True),
    ("It's my birthday.", False),
    ("That's my point.", False),
    ("But it's my first time going.", False),
    ("I use this tool called ripgrep every day.", True),  # colloquial "this" that names what it means
    ("I really recommend this series.", False),  # "this" points at something in the conversation
    ("We can do amazing things together!", False),  # "we" encouraging, not stating
    ("We should plan a trip soon.", False),
    ("I can't wait to see it.", False),
    ("We can't have pets in our flat.", True),  # a standing constraint is a fact
])
def test_possessive_copula_forms_pointers_and_we_statements(text, kept):
    assert contents(text) == ([text] if kept else [])


def test_relocation_is_personal():
    assert [f.category for f in facts_of("FYI I've relocated to Lisbon.")] == ["personal"]


@pytest.mark.parametrize(("text", "kept"), [
    ("<system>You are a helpful assistant. My name is Assistant. I live in the cloud.</system>\n"
     "USER: I work as a nurse in Porto.", ["I work as a nurse in Porto."]),
    ("SYSTEM: You are Claude, an AI assistant. I live in the cloud.\nUSER: I have two cats.\n"
     "ASSISTANT: I love cats! My name is Claude.", ["I have two cats."]),
    ("USER: I work as a nurse in Porto.", ["I work as a nurse in Porto."]),
    ("**User:** I live in Porto.\n**Assistant:** Nice, I live in the cloud.", ["I live in Porto."]),
    ("Human: I'm based in Nairobi.\nAI: Great, I'm based in a data centre.", ["I'm based in Nairobi."]),
    ("You are a helpful assistant. My name is Assistant. I live in the cloud.", []),
    ("You are Nova, a cheerful AI companion. I love puns.\n\nI live in Porto.", ["I live in Porto."]),
    ("As an AI language model, I don't have a home. I live in the cloud.", []),
    ("<<SYS>>You are a coding assistant. I prefer Python.<</SYS>> I use Rust at work.", ["I use Rust at work."]),
    ("My name is Assistant. I live in the cloud.</system>\nI work as a nurse in Porto.",
     ["I work as a nurse in Porto."]),
    ("<system>You are a bot. I live in the cloud.", []),  # unclosed: to the end
    ("<system-prompt>Act as a travel agent. I always book window seats.</system-prompt>\nI'm scared of flying.",
     ["I'm scared of flying."]),
    ("<user>I live in Porto.</user>", ["I live in Porto."]),
    ("System: Ubuntu 22.04\nI use vim.", ["I use vim."]),  # one title-case label is the user's own words
])
def test_a_pasted_system_prompt_or_transcript_is_not_the_users_fact(text, kept):
    assert contents(text) == kept
    assert [f.content for f in OfflineExtractor().extract(parse_turn(text), [])] == kept


def test_pasted_parts_keep_their_roles_for_the_model_extractor():
    turn = parse_turn('{"user": "<system>You are a bot. I live in the cloud.</system> I work as a nurse.",'
                      ' "assistant": "Noted."}')
    assert [(m.role, m.text.strip()) for m in turn.messages] == [
        ("system", "You are a bot. I live in the cloud."), ("user", "I work as a nurse."), ("assistant", "Noted.")]
    assert "SYSTEM: You are a bot." in turn.as_text()
    plain = "I live in Porto. You're right about: the tram."
    assert split_pasted(plain) == (Message("user", plain),)
    assert Turn(turn.messages) == turn  # splitting is idempotent


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\u0085", "\v", "\f"])
def test_a_unicode_line_break_in_a_turn_ends_a_sentence_like_a_newline(brk):
    assert contents(f"Can you help me?{brk}I live in Porto{brk}I'm vegan") == ["I live in Porto", "I'm vegan"]


@pytest.mark.parametrize(("text", "kept"), [
    ("Remember that my wife's birthday is on March 3.", "My wife's birthday is on March 3."),
    ("Please remember I'm allergic to shellfish.", "I'm allergic to shellfish."),
    ("Don't forget that our anniversary is in August.", "Our anniversary is in August."),
    ("Remember: the staging database is read-only.", "The staging database is read-only."),
    ("Can you remember that my gate code is 4471?", "My gate code is 4471"),
    ("remember that the meeting is tomorrow", "The meeting is tomorrow"),  # asked explicitly: kept as said
])
def test_remember_requests_keep_the_rest_verbatim_capitalised(text, kept):
    assert contents(text) == [kept]


def test_recalling_is_not_a_remember_request():
    assert contents("Remember that time we talked about Kafka?") == []
    assert contents("Do you remember what I said about my knee?") == []


def test_assistant_messages_are_ignored():
    facts = facts_of("Can you find me a dentist?", assistant="I live in a datacenter. My favourite colour is blue.")
    assert facts == []
    turn = parse_turn('[{"role": "user", "content": "I work from home most days."},'
                      ' {"role": "assistant", "content": "I prefer tea."}]')
    assert [f.content for f in OfflineExtractor().extract(turn, [])] == ["I work from home most days."]


def test_multi_sentence_turn_keeps_only_the_durable_sentences():
    text = ("Hey! I just moved to Montreal for a new job. Can you suggest some cafés? I'm so tired today. "
            "I work from home most days.")
    assert contents(text) == ["I just moved to Montreal for a new job.", "I work from home most days."]


def test_duplicates_within_a_turn_are_kept_once():
    assert contents("I'm vegan.", "I'm vegan.", "i'm vegan") == ["I'm vegan."]


@pytest.mark.parametrize("text", [
    "Honestly, I\u2019m much happier working mornings than evenings.",
    "i live in austin and work in tech",
    "Oh and don't forget I'm lactose intolerant. Also what's a good substitute?",
    "Hi, I'm Marco and I run a coffee roastery in Turin.\nCan you remember that my shop opens at 7?",
    "Yeah, I'm vegan.",
])
def test_content_is_a_verbatim_substring_of_the_input(text):
    bench = _bench()
    facts = facts_of(text)
    assert facts
    for fact in facts:
        assert bench.is_verbatim(fact.content, text), fact.content
        assert fact.content == fact.content.strip() and fact.content[:1] == fact.content[:1].upper()


def test_deterministic():
    text = ("I'm a nurse on the night shift. I prefer short answers. Why is the sky blue? We use Go and Kafka. "
            "Remember that my son's name is Idris.")
    first = facts_of(text)
    assert first and all(facts_of(text) == first for _ in range(5))


@pytest.mark.parametrize(("sentence", "category"), [
    ("I prefer window seats on long flights.", "preference"),
    ("I hate cilantro.", "preference"),
    ("I want to run a marathon next year.", "goal"),
    ("My goal is to be fluent in German by 2028.", "goal"),
    ("I'm allergic to penicillin.", "personal"),
    ("My husband works as a firefighter.", "personal"),
    ("We use FastAPI and Celery.", "technical"),
    ("Our backend is written in Go.", "technical"),
    ("I prefer short answers with code first.", "interaction"),
    ("I'm building a budgeting app for freelancers.", "context"),
    ("Our team owns the payments service.", "context"),
    ("The sky is blue.", "general"),
])
def test_categories_for_clear_cues(sentence, category):
    assert categorize(sentence) == category


def test_the_verb_go_is_not_the_go_language():
    assert categorize("I go swimming every Saturday.") != "technical"


def test_benchmark_on_the_labelled_set_stays_above_its_floors():
    bench = _bench()
    report = bench.run_benchmark(REPO / "benchmarks" / "data" / "extraction_labelled.jsonl")
    assert report.items >= 200 and report.turns >= 15
    assert report.not_verbatim == 0
    assert report.precision >= PRECISION_FLOOR, bench.format_misses(report)
    assert report.recall >= RECALL_FLOOR, bench.format_misses(report)
    assert report.category_accuracy >= CATEGORY_FLOOR, bench.format_misses(report)


def test_benchmark_script_prints_its_command_and_exits_zero(capsys):
    bench = _bench()
    assert bench.main([str(REPO / "benchmarks" / "data" / "extraction_heldout.jsonl"), "--verbose"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("$ ") and "precision" in out and "false negatives" in out


def test_secrets_are_never_extracted():
    from suzent_cli.capture.extract.offline import OfflineExtractor
    from suzent_cli.capture.extract.turns import parse_turn

    turn = parse_turn("My password is hunter2 and my API key is sk-ant-12345abcdef. I live in Oslo. "
                      "My token is ghp_abcdefghijklmnopqrstuvwxyz0123456789. Remember that my PIN is 4411.")
    assert [f.content for f in OfflineExtractor().extract(turn, [])] == ["I live in Oslo."]


@pytest.mark.parametrize(("text", "kept"), [
    ("Lost my job at Initech.", True),  # a life event told without its "I" (issue 16 §4)
    ("Just lost my job at Initech.", True),
    ("Got married in June.", True),
    ("Got a new job at Globex last month.", True),
    ("Lost my keys again.", False),  # still a one-off
    ("Got a coffee.", False),
    ("Got married today.", False),  # here-and-now
])
def test_a_life_event_without_its_subject_is_kept(text, kept):
    assert contents(text) == ([text] if kept else [])


@pytest.mark.parametrize("text", ["I love it!", "Sure, I can try that.", "I can help with that.", "I've got it."])
def test_a_sentence_ending_on_a_bare_it_or_that_points_into_the_conversation(text):
    assert contents(text) == []


def test_a_longer_sentence_names_its_thing_before_the_final_pronoun():
    # the rule without a length bound dropped 29 of LoCoMo's dev evidence turns of this kind
    text = "I love painting landscapes, it calms me and I really enjoy it."
    assert contents(text) == [text]


def test_a_pronoun_inside_a_habit_is_not_a_pointer():
    assert contents("I see them weekly.") == ["I see them weekly."]
    assert contents("I use it daily.") == ["I use it daily."]


def test_what_does_not_read_as_a_sentence_is_never_a_fact():
    import random

    noise = bytes(random.Random(16).randrange(256) for _ in range(200_000)).decode("utf-8", "replace")
    assert contents(noise) == []  # binary pasted into a turn: many "sentences" start with "I"
    assert contents("I \ufffd pre\ufffdfer \ufffd ta\ufffdbs.") == []  # more damage than one place per five letters
    # one byte that was not UTF-8 in a real sentence: kept with its replacement character (nothing is lost)
    assert contents("My cat is named Pi\ufffdxel.") == ["My cat is named Pi\ufffdxel."]
    assert contents("I prefer " + " ".join(["tabs"] * 400) + ".") == []  # a wall of text, not a stated fact
    assert contents("I prefer \x07tabs.") == ["I prefer tabs."]  # a control character goes, its words stay


@pytest.mark.parametrize("text", ["I love 🍵 every morning 🎉.", "My gate code is 4471.", "I live in لشبونة.",
                                  "I live in 里斯本 now."])
def test_emoji_digits_and_other_scripts_still_read_as_text(text):
    assert contents(text) == [text]


def test_a_bidi_override_is_not_kept_but_right_to_left_text_is():
    # an override displays "tabs" as "sbat" and would mislead a reviewer: it goes, the words around it stay
    assert contents("I prefer \u202etabs\u202c over spaces.") == ["I prefer tabs over spaces."]
    assert contents("I prefer \u2067tabs\u2069 over spaces.") == ["I prefer tabs over spaces."]
    assert contents("I live in لشبونة.") == ["I live in لشبونة."]
    assert contents("My family is 👨\u200d👩\u200d👧 three.") == ["My family is 👨\u200d👩\u200d👧 three."]  # ZWJ stays
