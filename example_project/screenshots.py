"""The documentation's screenshots of the admin, taken from the example shop.

``make screenshots`` runs it: a fresh SQLite database in a temporary directory, the demo's
rows (``shop_demo``) and one order added through the admin, the project's own server,
and the headless Chromium the browser tests use (``SNOWID_CHROMIUM`` or ``chromium`` on
the PATH). It writes, into the directory given (``docs/_static/screenshots``):

- ``decode.png``: one id taken apart, with its bit diagram;
- ``decode-table.png``: a dozen ids and order numbers, one row each;
- ``changelist.png``: the orders' changelist with the decoded columns;
- ``status.png``: the status page of streams and leases.

Each at 1280x800 with the admin's sidebar open, as a laptop shows it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROJECT = Path(__file__).resolve().parent
VIEWPORT = {"width": 1280, "height": 800}
USER, PASSWORD = "admin", "admin"  # the demo's, see shop_demo


def manage(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(env: dict[str, str]) -> Iterator[str]:
    """The project's development server (it serves the admin's static files too)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/admin/login/", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None:
                    sys.exit(
                        f"The server stopped:\n{process.stderr.read() if process.stderr else ''}"
                    )
                time.sleep(0.1)
        else:
            sys.exit(f"The server did not answer at {url} within 20 seconds.")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def chromium() -> str:
    path = os.environ.get("SNOWID_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        sys.exit(f"No Chromium at {path} (Debian: apt-get install chromium; or SNOWID_CHROMIUM).")
    return path


def ids_to_show(env: dict[str, str]) -> tuple[str, list[str]]:
    """An order's id, and a dozen values of every kind (ids, order numbers, products)."""
    code = (
        "from shop.models import Order, Product\n"
        "orders = list(Order.objects.order_by('pk'))\n"
        "values = [o.pk for o in orders[:5]] + [o.number for o in orders[:5]]\n"
        "values += [p.pk for p in Product.objects.order_by('pk')[:2]]\n"
        "print(' '.join(map(str, [orders[0].pk, *values])))\n"
    )
    one, *many = manage("shell", "-v", "0", "-c", code, env=env).split()
    return one, many


def take(out: Path, url: str, one: str, many: list[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium(), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(viewport=VIEWPORT).new_page()

        def submit() -> None:
            with page.expect_navigation():
                page.click("input[type=submit]")

        def shot(name: str, *, full_page: bool = False) -> None:
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=full_page)
            written.append(path)

        page.goto(f"{url}/admin/login/?next=/admin/")
        page.fill("#id_username", USER)
        page.fill("#id_password", PASSWORD)
        submit()
        # One order taken in the admin: the server leases a worker id, the status page
        # shows the lease.
        page.goto(f"{url}/admin/shop/order/add/")
        page.select_option("#id_user", label="carol")
        page.fill("#id_note", "taken in the admin")
        with page.expect_navigation():
            page.click("input[name=_save]")

        page.goto(f"{url}/admin/shop/order/")
        shot("changelist")

        page.goto(f"{url}/admin/django_snowid/iddecoder/")
        page.fill("#id_ids", one)
        with page.expect_navigation():
            page.click("input[name=decode]")
        page.locator("section.snowid-result").scroll_into_view_if_needed()
        shot("decode", full_page=True)

        page.goto(f"{url}/admin/django_snowid/iddecoder/")
        page.fill("#id_ids", "\n".join(many))
        with page.expect_navigation():
            page.click("input[name=decode]")
        shot("decode-table", full_page=True)

        page.goto(f"{url}/admin/django_snowid/storestatus/")
        shot("status")
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the directory to write the PNG files into")
    out: Path = parser.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="snowid-shots-") as tmp:
        env = {
            **os.environ,
            "SHOP_DB_PATH": str(Path(tmp) / "shop.sqlite3"),
            "SHOP_DEBUG": "1",  # runserver serves the static files
            "PYTHONPATH": os.pathsep.join([str(PROJECT.parent), os.environ.get("PYTHONPATH", "")]),
        }
        env.pop("SHOP_REDIS_URL", None)  # the embedded default: nothing else to run
        manage("migrate", "--noinput", "-v", "0", env=env)
        manage("shop_demo", env=env)
        one, many = ids_to_show(env)
        with server(env) as url:
            written = take(out, url, one, many)
    for path in written:
        print(
            f"{path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}: "
            f"{path.stat().st_size // 1024} KB"
        )


if __name__ == "__main__":
    main()
