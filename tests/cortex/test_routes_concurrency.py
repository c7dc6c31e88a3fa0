"""A person's PUTs racing an update's edit_file in another process: no edit is lost."""
from src.utils import provider
from tests.cortex.support import Lines, spawn

FILE = "/api/personas/default/cortex/memory.md"
COUNT = 30


def test_put_races_edit_file_from_another_process(app, client, data_dir):
    start = client.get(FILE).get_json()
    with spawn("edit", str(data_dir), "default", "update", "0") as editor:
        lines = Lines(editor)
        assert lines.next() == "ready"
        editor.stdin.write(b"go\n")
        assert lines.next().startswith("ok ")
        response = client.get(FILE)
        body, etag = response.get_json(), response.headers["ETag"]
        for i in range(COUNT):
            while True:
                response = client.put(FILE, json={"content": body["content"] + f"person-{i}\n"},
                                      headers={"If-Match": etag})
                if response.status_code == 200:
                    body, etag = response.get_json(), response.headers["ETag"]
                    break
                assert response.status_code == 412
                body, etag = response.get_json()["error"]["current"], response.headers["ETag"]
                assert etag == f'"{body["revision"]}"'
        (data_dir / "stop-editing").touch()
        edits = lines.until("done")
    assert editor.returncode == 0

    done = [line for line in edits if line.startswith("ok ")]
    edit_count = len(done) + 1  # the first `ok` was read before the person started
    final = client.get(FILE).get_json()["content"]
    assert final.startswith(start["content"])
    for line in [f"person-{i}" for i in range(COUNT)] + [f"update-{i}" for i in range(edit_count)]:
        assert final.count(line + "\n") == 1, f"{line} was lost or doubled"
    history = client.get(FILE + "/history").get_json()["revisions"]
    by_author = [r["author"] for r in history]
    assert by_author.count("user") == COUNT and by_author.count("ai") == edit_count
    assert "external" not in by_author
    edit_revs = {int(line.split()[1]) for line in done}
    assert edit_revs <= {r["rev"] for r in history if r["author"] == "ai"}
    assert provider.get_cortex_service().read_file("default", "memory.md") == final
    order = "".join(author[0] for author in reversed(by_author))
    assert "aua" in order, f"the two writers never overlapped ({order}); nothing was raced"


def test_put_based_on_a_view_older_than_an_update_gets_412(app, client, data_dir):
    seen = client.get(FILE)
    with spawn("edit", str(data_dir), "default", "update", "1") as editor:
        lines = Lines(editor)
        assert lines.next() == "ready"
        editor.stdin.write(b"go\n")
        lines.until("done")
    response = client.put(FILE, json={"content": "the person's text\n"},
                          headers={"If-Match": seen.headers["ETag"]})
    assert response.status_code == 412
    current = response.get_json()["error"]["current"]
    assert current["content"] == seen.get_json()["content"] + "update-0\n"
    assert client.get(FILE).get_json() == current
