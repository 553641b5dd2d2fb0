"""The one safe file reader every loader uses (moot.files): links out of the root, FIFOs,
devices, folders, sizes and credentials, on real files, links and FIFOs."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from moot.files import (
    UnsafeFileError,
    contains_credentials,
    open_regular,
    read_bytes,
    read_text,
    regular_files,
    stream_contains_credentials,
    within,
)

TOKEN = "sk-proj-" + "A1b2C3d4" * 5


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A root with a note, a secret outside it, and the things a careless or hostile folder holds."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "note.md").write_text("a plain note\n")
    (root / "sub" / "deep.txt").write_text("deeper\n")
    (tmp_path / "secret.txt").write_text("the secret outside\n")
    os.symlink(tmp_path / "secret.txt", root / "leak.md")
    os.symlink(root / "note.md", root / "alias.md")  # stays inside: read as its target
    os.symlink("/etc/passwd", root / "passwd.txt")
    os.mkfifo(root / "pipe.md")
    os.symlink("/dev/zero", root / "zero.txt")
    (root / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    (root / "notes-with-token.md").write_text(f"my key is {TOKEN}\n")
    return root


def test_a_link_that_leaves_the_root_is_refused_and_one_inside_is_read(tree: Path) -> None:
    with pytest.raises(UnsafeFileError) as leak:
        read_bytes("leak.md", root=tree, max_bytes=1000)
    assert leak.value.reason == "outside" and "leads outside" in leak.value.one_line()
    with pytest.raises(UnsafeFileError) as passwd:
        read_bytes("passwd.txt", root=tree, max_bytes=100_000)
    assert passwd.value.reason == "outside"
    assert read_bytes("alias.md", root=tree, max_bytes=1000) == b"a plain note\n"
    assert read_text("sub/deep.txt", root=tree, max_bytes=1000) == "deeper\n"
    with pytest.raises(UnsafeFileError):
        read_bytes("../secret.txt", root=tree, max_bytes=1000)


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tree: Path) -> None:
    # Without O_NONBLOCK this open would wait forever for a writer.
    with pytest.raises(UnsafeFileError) as fifo:
        read_bytes(tree / "pipe.md", max_bytes=1000)
    assert fifo.value.reason == "special" and "FIFO" in fifo.value.one_line()
    with pytest.raises(UnsafeFileError):
        read_bytes("pipe.md", root=tree, max_bytes=1000)


def test_devices_and_folders_are_not_files(tree: Path) -> None:
    with pytest.raises(UnsafeFileError) as zero:
        read_bytes("/dev/zero", max_bytes=1 << 20)
    assert zero.value.reason == "special" and "device" in zero.value.one_line()
    with pytest.raises(UnsafeFileError) as linked:  # a link to a device, even when named by the user
        read_bytes(tree / "zero.txt", max_bytes=1 << 20)
    assert linked.value.reason == "special"
    with pytest.raises(UnsafeFileError) as folder:
        read_bytes(tree / "sub", max_bytes=1000)
    assert folder.value.reason == "folder"


def test_the_byte_cap_names_the_limit(tree: Path) -> None:
    big = tree / "big.txt"
    big.write_bytes(b"x" * 3000)
    with pytest.raises(UnsafeFileError) as err:
        read_bytes(big, max_bytes=2048)
    assert err.value.reason == "too-large"
    assert "over the 2 KB limit" in err.value.one_line() and "fix:" in err.value.one_line()
    assert len(read_bytes(big, max_bytes=3000)) == 3000


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tree: Path) -> None:
    grows = tree / "grows.txt"
    grows.write_bytes(b"x" * 10)
    with open_regular(grows, max_bytes=100) as handle:
        with open(grows, "ab") as writer:
            writer.write(b"y" * 500)
        from moot.files import read_capped

        with pytest.raises(UnsafeFileError):
            read_capped(handle, 100, "grows.txt")


def test_credentials_by_name_and_by_content_are_refused(tree: Path) -> None:
    with pytest.raises(UnsafeFileError) as key:
        read_bytes("id_rsa", root=tree, max_bytes=1000)
    assert key.value.reason == "credentials"
    with pytest.raises(UnsafeFileError) as token:
        read_bytes("notes-with-token.md", root=tree, max_bytes=1000)
    assert token.value.reason == "credentials" and TOKEN not in token.value.one_line()
    assert read_bytes("notes-with-token.md", root=tree, max_bytes=1000, credentials=False).startswith(b"my key")


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.txt").write_text("not yours\n")
    real = within(tree, "sub/deep.txt")  # checked while sub/ is a folder...
    (tree / "sub" / "deep.txt").unlink()
    (tree / "sub").rmdir()
    os.symlink(outside, tree / "sub")  # ...then swapped for a link out of the root
    from moot.files import _open_beneath

    with pytest.raises(UnsafeFileError) as err:
        _open_beneath(tree.resolve(), real.relative_to(tree.resolve()).parts, "sub/deep.txt")
    assert err.value.reason == "symlink"


def test_follow_false_refuses_a_link_even_when_named(tree: Path) -> None:
    with pytest.raises(UnsafeFileError) as err:
        read_bytes(tree / "alias.md", max_bytes=1000, follow=False)
    assert err.value.reason == "symlink"


def test_listing_a_folder_opens_nothing_and_says_what_each_entry_is(tree: Path) -> None:
    listed = dict(regular_files(tree))
    assert listed["note.md"] is None and listed["leak.md"] is None  # a link: the root decides on reading
    assert listed["pipe.md"] == "special" and listed["sub"] == "folder"


def test_a_token_across_a_chunk_boundary_is_found() -> None:
    data = b"x" * ((1 << 20) - 10) + b" " + TOKEN.encode() + b"\n"
    assert contains_credentials(data)
    assert stream_contains_credentials(io.BytesIO(data))
    assert not stream_contains_credentials(io.BytesIO(b"plain text\n" * 200_000))
