"""The `send_date` forms SillyTavern has written (its own reader: `parseTimestamp` in
public/scripts/utils.js), read as stored timestamps; anything else is None (docs/chat-import.md)."""
import pytest

from src.utils.portability.chat_dates import parse_date


@pytest.mark.parametrize("value, stored", [
    (1717687020000, "2024-06-06T15:17:00.000Z"),
    ("1717687020000", "2024-06-06T15:17:00.000Z"),
    (1717687020123.0, "2024-06-06T15:17:00.123Z"),
    ("June 6, 2024 3:14pm", "2024-06-06T15:14:00.000Z"),
    ("June 19, 2023 12:05am", "2023-06-19T00:05:00.000Z"),
    ("December 1, 2023 12:30PM", "2023-12-01T12:30:00.000Z"),
    ("2024-7-12@01h31m37s", "2024-07-12T01:31:37.000Z"),
    ("2024-6-5 @14h 56m 50s 682ms", "2024-06-05T14:56:50.682Z"),
    ("2024-06-06T15:20:31.004Z", "2024-06-06T15:20:31.004Z"),
    ("2024-06-06T17:20:31+02:00", "2024-06-06T15:20:31.000Z"),
    ("2024-06-06 15:20", "2024-06-06T15:20:00.000Z"),
])
def test_known_forms_are_read(value, stored):
    assert parse_date(value) == stored


@pytest.mark.parametrize("value", [
    None, True, "", "the day after", "Smarch 3, 2024 1:00pm", "February 30, 2024 1:00pm",
    "2024-13-01@01h01m01s", 5, -1717687020000, 10**20, float("nan"), float("inf"), "9" * 17,
    {"date": 1}, ["2024-06-06T15:20:31Z"], "2024-06-06T25:00", "x" * 100,
    # the window epoch values have holds for every form: the ends of Python's calendar with a
    # zone overflowed when moved to UTC (a 500), year 1 was stored as "1-01-01T…", year 9999
    # sorted after every real date
    "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59Z", "1999-12-31T23:59:59Z", "2100-01-01T00:00:00Z",
    "0999-06-06@10h10m10s", "June 6, 1999 3:14pm", "2100-1-1 @0h 0m 0s",
])
def test_anything_else_is_none(value):
    assert parse_date(value) is None
