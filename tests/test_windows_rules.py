"""The bench's Windows rules on every platform: bot commands split and joined as each system's
programs do (ref_sim.command_words, called with the system as a parameter), the names derived
from a Windows path, and ``--isolate`` refused in one line where it cannot work."""

from __future__ import annotations

import random

import pytest

from ref_sim import command_words, match
from ref_sim.series.process import isolation
from ref_sim.series.specs import agent_spec, command_label

#: (command line, its words by Windows' rules): what a student types in cmd or PowerShell.
WINDOWS_SPLITS = [
    (r"C:\bots\otter.exe {name}", [r"C:\bots\otter.exe", "{name}"]),
    (r'"C:\Program Files\x\bot.exe" {name} --dir {dir}', [r"C:\Program Files\x\bot.exe", "{name}", "--dir", "{dir}"]),
    (r"py -3 C:\bots\kea.py {name}", ["py", "-3", r"C:\bots\kea.py", "{name}"]),
    (r'java -cp "C:\my bots" Otter {name}', ["java", "-cp", r"C:\my bots", "Otter", "{name}"]),
    (r'bot.exe "a \"quoted\" word"', ["bot.exe", 'a "quoted" word']),
    (r'bot.exe "C:\folder with space\\" x', ["bot.exe", "C:\\folder with space\\", "x"]),
    (r"bot.exe C:\folder\ x", ["bot.exe", "C:\\folder\\", "x"]),   # a backslash before no quote: literal
    (r'bot.exe "" "a""b"', ["bot.exe", "", 'a"b']),                  # empty; "" inside quotes
    ("  bot.exe\t{name}  ", ["bot.exe", "{name}"]),
    ("", []),
]
#: The same by POSIX shell rules: the backslashes of an unquoted Windows path are eaten there.
POSIX_SPLITS = [
    ("python3 bots/walrus.py {name}", ["python3", "bots/walrus.py", "{name}"]),
    ("python3 'my bots/otter.py' {name}", ["python3", "my bots/otter.py", "{name}"]),
    (r"C:\bots\otter.exe {name}", ["C:botsotter.exe", "{name}"]),
    ('java -cp "a b" Otter', ["java", "-cp", "a b", "Otter"]),
    ("", []),
]


@pytest.mark.parametrize("text, words", WINDOWS_SPLITS)
def test_windows_split(text, words):
    assert command_words.split(text, windows=True) == words


@pytest.mark.parametrize("text, words", POSIX_SPLITS)
def test_posix_split(text, words):
    assert command_words.split(text, windows=False) == words


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "posix"])
@pytest.mark.parametrize("words", [
    [r"C:\Program Files\x\bot.exe", "{name}", "--dir", "{dir}"],
    ["python3", "my bots/otter.py", "", "a b", 'say "hi"', "tab\there", "end\\"],
    ["/usr/bin/java", "-cp", "/home/me/bots:/opt/lib", "Otter", "{name}"],
])
def test_join_is_what_split_reads_back(windows, words):
    assert command_words.split(command_words.join(words, windows=windows), windows=windows) == words


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "posix"])
def test_join_and_split_agree_on_awkward_words(windows):
    """Seeded random words of spaces, tabs, quotes and backslashes come back whole. A program's
    name (the first word) holds no quote and ends in no backslash: no path does."""
    chooser = random.Random(20261206)
    alphabet = [" ", "\t", '"', "\\", "'", "a", "{", "}", "$", "é"]
    for _ in range(2000):
        words = ["".join(chooser.choice(alphabet) for _ in range(chooser.randrange(0, 7)))
                 for _ in range(chooser.randrange(1, 5))]
        words[0] = words[0].replace('"', "q").rstrip("\\") or "bot.exe"
        assert command_words.split(command_words.join(words, windows=windows), windows=windows) == words


def test_the_default_is_this_systems_rules(monkeypatch):
    monkeypatch.setattr(command_words, "WINDOWS", True)
    assert command_words.split(r"C:\bots\otter.exe {name}") == [r"C:\bots\otter.exe", "{name}"]
    monkeypatch.setattr(command_words, "WINDOWS", False)
    assert command_words.split(r"C:\bots\otter.exe {name}") == ["C:botsotter.exe", "{name}"]


@pytest.mark.parametrize("text, label", [
    (r"C:\bots\otter.exe {name}", "Otter"),
    (r'"C:\Program Files\x\bot.exe" {name}', "Bot"),
    (r"py -3 C:\bots\kea.py {name}", "Kea"),
    (r"C:\Python311\python.exe C:\bots\heron.py {name}", "Heron"),
    (r"java -jar C:\bots\dist\walrus.jar {name}", "Walrus"),
    (r"C:\Python311\python3.11.exe -c pass", "Python"),
])
def test_a_windows_path_names_its_bot_on_every_system(text, label):
    """Named from the file, not from the whole path (``Tmpwinrepodistutttagentutttagent1``)."""
    assert command_label(command_words.split(text, windows=True)) == label


def test_a_windows_command_plays_as_written(monkeypatch, tmp_path):
    """Under Windows' rules the program keeps its backslashes and spaces, and its name is its file's."""
    monkeypatch.setattr(command_words, "WINDOWS", True)
    monkeypatch.chdir(tmp_path)
    spec = agent_spec(r'"C:\Program Files\x\bot.exe" {name} --dir {dir} --time-limit {time_limit}')
    assert spec.label == "Bot"
    assert spec.command("Bot1", r"D:\games\game", 2) == [r"C:\Program Files\x\bot.exe", "Bot1", "--dir",
                                                         r"D:\games\game", "--time-limit", "2"]


def test_isolate_where_it_cannot_work_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(isolation, "SUPPORTED", False)
    with pytest.raises(SystemExit) as stop:
        match.main(["random", "random", "--games", "1", "--isolate"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--isolate needs Linux" in err


def test_resuming_an_isolated_series_where_it_cannot_work_says_why(monkeypatch):
    monkeypatch.setattr(isolation, "SUPPORTED", False)
    with pytest.raises(ValueError, match="--isolate needs Linux"):
        isolation.from_record({"cores": 1, "memory_mb": 0, "processes": 0})
