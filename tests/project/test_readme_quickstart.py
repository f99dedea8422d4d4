"""The README's Installation and Quick start run as written: a new project is built from
the README's own code blocks (each marked ``<!-- quickstart: ... -->``) and checked,
migrated and used. Also shows the W030 warning ``startapp``'s ``apps.py`` earns."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support import ROOT

MARKED = re.compile(r"<!-- quickstart: (\w+) ?(\S*) -->\n```\w*\n(.*?)```", re.DOTALL)


def quickstart_blocks() -> list[tuple[str, str, str]]:
    blocks = MARKED.findall((ROOT / "README.md").read_text())
    assert [b[0] for b in blocks] == ["append", "write", "write", "run"], blocks
    return blocks


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(ROOT)  # the django_snowid under test, not another install
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow
@pytest.mark.redis
def test_the_quick_start_runs_as_written(tmp_path, settings):
    import redis

    blocks = quickstart_blocks()
    run(["-m", "django", "startproject", "mysite", "."], tmp_path)
    run(["manage.py", "startapp", "shop"], tmp_path)
    prefix = f"snowid-readme-{uuid.uuid4().hex[:8]}"
    for action, name, text in blocks:
        if action == "append":
            with open(tmp_path / name, "a") as out:
                out.write("\n" + text)
                # Only for the test: the suite's Redis, under keys of its own.
                out.write(
                    f'\nCACHES["snowid"]["LOCATION"] = {settings.REDIS_URL!r}\n'
                    f"SNOWID_REDIS_KEY_PREFIX = {prefix!r}\n"
                )
        elif action == "write" and name == "shop/models.py":
            (tmp_path / name).write_text(text)
    # startapp's apps.py is still there: the check names the app it takes from us.
    warned = run(["manage.py", "check"], tmp_path)
    assert "django_snowid.W030" in warned.stderr + warned.stdout
    assert (
        "App 'shop'" in warned.stderr + warned.stdout and "Order" in warned.stderr + warned.stdout
    )
    (tmp_path / "shop/apps.py").write_text(dict((b[1], b[2]) for b in blocks)["shop/apps.py"])
    outputs = []
    for line in blocks[3][2].splitlines():
        command = line.removeprefix("$ ").split()
        assert command[:2] == ["python", "manage.py"], line
        outputs.append(run(command[1:], tmp_path))
    assert "System check identified no issues" in outputs[-1].stdout
    try:
        made = run(
            [
                "manage.py",
                "shell",
                "-c",
                "from shop.models import Order; o = Order.objects.create(user_id=1820); "
                "print(o.pk, o.public_id, o.number, type(o._meta.pk).__name__)",
            ],
            tmp_path,
        )
        pk, public_id, number, pk_class = made.stdout.split()[-4:]
        assert pk_class == "SnowflakeAutoField"
        assert 0 < int(public_id) < 2**53 and int(number) % 16 == 1820 % 16
        decoded = json.loads(run(["manage.py", "snowid_decode", pk, "--json"], tmp_path).stdout)
        assert decoded[0]["id"] == pk and decoded[0]["layout"] == "default"
        assert "detected" in decoded[0]["reading"]
        assert decoded[0]["held_by"] == [{"field": "shop.Order.id", "pk": pk}]
        # The js53 id is read by its own layout, "public", and found in its row.
        args = ["manage.py", "snowid_decode", public_id, "--json"]
        (public,) = json.loads(run(args, tmp_path).stdout)
        assert public["layout"] == "public", public
        assert public["held_by"] == [{"field": "shop.Order.public_id", "pk": pk}]
    finally:
        client = redis.Redis.from_url(settings.REDIS_URL)
        for key in client.scan_iter(match=f"*{prefix}*"):
            client.delete(key)
