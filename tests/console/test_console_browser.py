"""tests/console/test_console_browser.py — the web console in a real browser: Debian's chromium,
headless, driven through chromedriver (webdriver.py), against a real pure-serve on 127.0.0.1
serving examples/bank_ledger.pure. Opens the console, pages through a list and filters it,
runs queries (one refused by the form's own check, one answered, one failing with 409), sends
an event that commits and one that fails, checks the source and the live figures, and then the
token flow of a server started with --token-file. A screenshot of each step goes to the output
directory (argument 1; ctest passes build/tests/console). Exits 77 (ctest: skipped) when
chromium or chromedriver is not installed."""
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
sys.path.insert(0, HERE)
from serve_client import Conn, Server, find_binary  # noqa: E402
from webdriver import Browser, find_browser  # noqa: E402

LEDGER = os.path.join(ROOT, "examples", "bank_ledger.pure")
SHOP = os.path.join(ROOT, "tests", "serve", "shop.pure")
OUT = os.environ.get("PURE_CONSOLE_OUT") or os.path.join(ROOT, "build", "tests", "console")
ACCOUNTS = 23  # three pages of 10

ROWS = "[...document.querySelectorAll('#rows tbody tr')].map(r => r.cells[0].textContent)"
RESULT = "const b = document.querySelector(`form[data-fn='${arguments[0]}'] .result`); return b ? [b.dataset.state || '', b.textContent] : null"


BROWSER = None  # one chromium for every test


def setUpModule():
    global BROWSER
    os.makedirs(OUT, exist_ok=True)
    (chromium, driver), _ = find_browser()
    BROWSER = Browser(chromium, driver)


def tearDownModule():
    if BROWSER:
        BROWSER.close()


class ConsoleTest(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server(find_binary(), [LEDGER])
        c = Conn(cls.server.port)
        for i in range(1, ACCOUNTS + 1):
            status, body = c.json("POST", "/v1/bank_ledger/open", {"id": i, "owner": f"owner{i}", "deposit": i * 10})
            assert status == 200, body
        c.close()
        cls.url = f"http://127.0.0.1:{cls.server.port}/"

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            assert cls.server.stop() == 0

    def setUp(self):
        self.b = BROWSER

    def tearDown(self):
        # a failing step leaves a picture of what the browser showed
        outcome = getattr(self, "_outcome", None)
        errors = getattr(getattr(outcome, "result", None), "failures", []) + getattr(getattr(outcome, "result", None), "errors", [])
        if any(test is self for test, _ in errors):
            try:
                self.b.screenshot(os.path.join(OUT, f"failed-{self._testMethodName}.png"))
            except Exception:
                pass

    def shot(self, name, css=None):
        if css:
            self.b.run("document.querySelector(arguments[0]).scrollIntoView({block: 'start'})", css)
        self.b.screenshot(os.path.join(OUT, name), css)

    def result(self, fn, state=None):
        """Waits until the form's result is settled (not pending), and returns (state, text)."""
        got = self.b.wait(f"const r = (() => {{ {RESULT} }})(); return r && r[0] && r[0] !== 'pending' ? r : null", fn,
                          what=f"the result of {fn}")
        if state:
            self.assertEqual(got[0], state, got)
        return got

    def open_console(self):
        self.b.get(self.url)
        self.b.wait("return document.querySelector('#lists tr[data-list=accounts] .count')?.textContent === arguments[0]",
                    str(ACCOUNTS), what="the accounts row count")
        self.b.wait(f"return ({ROWS}).length === 10", what="the first page of accounts")

    def send(self, fn, values):
        for name, value in values.items():
            self.b.type(f"form[data-fn='{fn}'] input[name='{name}']", str(value))
        # settle any earlier result first, so that the new one is not mistaken for it
        self.b.run(f"document.querySelector(`form[data-fn='{fn}'] .result`).dataset.state = ''")
        self.b.click(f"form[data-fn='{fn}'] button[type=submit]")

    def test_1_lists_page_and_filter(self):
        b = self.b
        self.open_console()
        self.assertEqual(b.run("return document.querySelector('#modules a.current').textContent"), "bank_ledger")
        self.assertEqual(b.text("#lists tr[data-list=journal] .count"), str(ACCOUNTS))
        self.assertEqual(b.text("#health"), "serving")
        self.assertEqual(b.run(f"return {ROWS}"), [str(i) for i in range(1, 11)])
        self.assertEqual(b.text("#page-info"), f"rows 1–10 of {ACCOUNTS}")
        self.assertTrue(b.run("return document.querySelector('#prev').disabled"))
        self.shot("01-console.png")
        b.click("#next")
        b.wait(f"return ({ROWS})[0] === '11'", what="page 2")
        self.assertEqual(b.run(f"return {ROWS}"), [str(i) for i in range(11, 21)])
        b.click("#next")
        b.wait(f"return ({ROWS})[0] === '21'", what="page 3")
        self.assertEqual(b.run(f"return {ROWS}"), ["21", "22", "23"])
        self.assertTrue(b.run("return document.querySelector('#next').disabled"))
        self.assertEqual(b.text("#page-info"), f"rows 21–23 of {ACCOUNTS}")
        self.shot("02-list-last-page.png", "#table")
        b.click("#prev")
        b.wait(f"return ({ROWS})[0] === '11'", what="back to page 2")
        self.assertEqual(b.text("#page-info"), f"rows 11–20 of {ACCOUNTS}")
        # the key-prefix filter, then paging within it
        b.type("#prefix", "2")
        b.click("#filter")
        b.wait(f"return ({ROWS})[0] === '2'", what="the prefix filter")
        self.assertEqual(b.run(f"return {ROWS}"), ["2", "20", "21", "22", "23"])
        self.shot("03-list-prefix.png", "#table")
        b.type("#prefix", "")
        b.click("#filter")
        b.wait(f"return ({ROWS}).length === 10 && ({ROWS})[0] === '1'", what="the filter cleared")
        # a sequence: its rows, no key to filter by
        b.click("#lists tr[data-list=journal] button")
        b.wait("return document.querySelector('#rows tbody td')?.textContent === 'open 1 for owner1 with 10.00'",
               what="the journal")
        self.assertTrue(b.run("return document.querySelector('#prefix').disabled"))
        b.click("#lists tr[data-list=accounts] button")
        b.wait(f"return ({ROWS})[0] === '1'", what="accounts again")

    def test_2_queries(self):
        b = self.b
        self.open_console()
        before = self.query_requests()
        # the form refuses a bad int itself: nothing is sent
        self.send("balance", {"id": "abc"})
        state, text = self.result("balance", "error")
        self.assertIn("not sent", text)
        self.assertIn("'abc' is not a whole number", text)
        self.assertTrue(b.run("return document.querySelector(\"form[data-fn='balance'] input[name='id']\").classList.contains('invalid')"))
        self.send("balance", {"id": "99999999999999999999"})
        self.assertIn("beyond int's range", self.result("balance", "error")[1])
        self.assertEqual(self.query_requests(), before, "an invalid form must not send a request")
        self.send("balance", {"id": "3"})
        self.assertTrue(self.result("balance", "ok")[1].startswith("→ 30.0"))
        self.send("total", {})
        self.assertTrue(self.result("total", "ok")[1].startswith(f"→ {sum(range(1, ACCOUNTS + 1)) * 10}.0"))
        self.shot("04-query.png", "#queries")
        self.send("balance", {"id": "99"})
        state, text = self.result("balance", "failed")
        self.assertRegex(text, r"^failed \(409\): runtime error at \d+:\d+: no item with key 99 in stored list 'accounts'")
        self.assertEqual(self.query_requests(), before + 3)

    def test_3_events(self):
        b = self.b
        self.open_console()
        # num fields: 'ten' is refused by the form
        self.send("transfer", {"from": "1", "to": "2", "amount": "ten"})
        self.assertIn("'ten' is not a number", self.result("transfer", "error")[1])
        self.send("transfer", {"from": "1", "to": "2", "amount": "5"})
        state, text = self.result("transfer", "ok")
        self.assertRegex(text, rf"^committed · seq {ACCOUNTS + 1}\b")
        # the open table and the row counts follow the event
        b.wait("return document.querySelector('#rows tbody tr')?.cells[2].textContent === '5.0'", what="balance 1 updated")
        b.wait("return document.querySelector('#lists tr[data-list=journal] .count')?.textContent === arguments[0]",
               str(ACCOUNTS + 1), what="journal count updated")
        self.shot("05-event-committed.png", "#events")
        self.send("transfer", {"from": "2", "to": "1", "amount": "5000"})
        state, text = self.result("transfer", "failed")
        self.assertTrue(text.startswith("failed (409): insufficient funds in 2: 25.00 < 5000.00"), text)
        self.send("open", {"id": "1", "owner": "eve", "deposit": "1"})
        self.assertTrue(self.result("open", "failed")[1].startswith("failed (409): account 1 already exists"))
        self.shot("06-event-failed.png", "#events")
        # nothing of the failed events is stored
        c = Conn(self.server.port)
        self.assertEqual(c.json("POST", "/v1/bank_ledger/balance", {"id": 2}), (200, {"result": 25.0}))
        c.close()

    def test_4_source_and_figures(self):
        b = self.b
        self.open_console()
        with open(LEDGER, encoding="utf-8") as f:
            source = f.read()
        shown = b.run("return [...document.querySelectorAll('#source .ln')].map(l => l.textContent).join('\\n')")
        self.assertEqual(shown, source)
        self.assertEqual(b.run("return document.querySelector('#source .ln .tok-com')?.textContent"), source.split("\n")[0])
        kws = b.run("return [...document.querySelectorAll('#source .tok-kw')].map(e => e.textContent)")
        self.assertIn("event", kws)
        self.assertIn("fail", kws)
        self.assertIn("transfer", b.run("return [...document.querySelectorAll('#source .tok-def')].map(e => e.textContent)"))
        self.assertIn('"account {id} already exists"',
                      b.run("return [...document.querySelectorAll('#source .tok-str')].map(e => e.textContent)"))
        self.shot("07-source.png", "#source")
        # live figures: events arrive between two polls, and the rate shows them
        c = Conn(self.server.port)
        deadline = time.monotonic() + 4.5
        while time.monotonic() < deadline:
            c.json("POST", "/v1/bank_ledger/transfer", {"from": 3, "to": 4, "amount": 0.01})
            time.sleep(0.02)
        c.close()
        figure = "return document.querySelector(`[data-figure='${arguments[0]}'] .value`)?.textContent"
        b.wait(f"const v = (() => {{ {figure} }})(); return v && Number(v) > 0", "events-rate", timeout=8,
               what="a positive events/s")
        self.assertRegex(b.run(figure, "event-p99"), r"^(\d+ µs|[\d.]+ ms|[\d.]+ s|> .*)$")
        self.assertRegex(b.run(figure, "memory-per-byte"), r"^\d+\.\d\d$")
        for name in ("log-bursts", "snapshots-held"):  # a number once the server has it, else —
            self.assertRegex(b.run(figure, name), r"^(—|…|[\d.]+)$")
        b.run("window.scrollTo(0, 0)")
        self.shot("08-figures.png", "#figures")

    def test_5_overview(self):
        """The README's picture (docs/images/console.png is a copy): the whole console after a
        short session on a fresh server."""
        b = self.b
        server = Server(find_binary(), [LEDGER])
        self.addCleanup(server.stop)
        c = Conn(server.port)
        names = ["ann", "bob", "cem", "dia", "eli", "fay", "gus", "hao", "ida", "jon", "kai", "lea", "max", "nia"]
        for i, name in enumerate(names, 1):
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": i, "owner": name, "deposit": 100 + 25 * i})[0], 200)
        self.assertEqual(c.json("POST", "/v1/bank_ledger/transfer", {"from": 1, "to": 2, "amount": 30.0})[0], 200)
        c.close()
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait(f"return ({ROWS}).length === 10", what="the first page of accounts")
        self.send("transfer", {"from": "2", "to": "1", "amount": "500"})
        self.assertIn("insufficient funds", self.result("transfer", "failed")[1])
        self.send("open", {"id": "15", "owner": "oda", "deposit": "75.5"})
        self.result("open", "ok")
        self.send("balance", {"id": "2"})
        self.assertTrue(self.result("balance", "ok")[1].startswith("→ 180.0"))
        b.click("#next")
        b.wait(f"return ({ROWS})[0] === '11'", what="page 2")
        time.sleep(2.5)  # two polls of /metrics
        b.run("window.scrollTo(0, 0)")
        self.shot("console.png")

    def test_6_items_lists_and_modules(self):
        """Two modules: the nav switches between them; item parameters get nested fields,
        item and list results come back as tables, and an error other than 409 is shown."""
        b = self.b
        server = Server(find_binary(), [LEDGER, SHOP], "--body-limit", "300")
        self.addCleanup(server.stop)
        c = Conn(server.port)
        for sku, price in (("fig", 0.5), ("kiwi", 2.0), ("lime", 0.25)):
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": sku, "qty": 3, "price": price, "active": True})[0], 200)
        c.close()
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelectorAll('#modules a').length === 2", what="two modules")
        self.assertEqual(b.run("return document.querySelector('#modules a.current').textContent"), "bank_ledger")
        b.click("#modules a[data-module=shop]")
        b.wait("return document.querySelector('#modules a.current')?.textContent === 'shop' && "
               "document.querySelector(\"form[data-fn='mid']\")", what="the shop module")
        # an item parameter: one input per field, named by its path
        names = b.run("return [...document.querySelectorAll(\"form[data-fn='mid'] input\")].map(i => i.name)")
        self.assertEqual(names, ["l.x1", "l.y1", "l.x2", "l.y2", "l.label"])
        self.send("mid", {"l.x1": "0", "l.y1": "0", "l.x2": "oops", "l.y2": "3", "l.label": "a"})
        self.assertIn("l.x2: 'oops' is not a number", self.result("mid", "error")[1])
        self.send("mid", {"l.x2": "1"})
        self.result("mid", "ok")
        cells = b.run("return [...document.querySelectorAll(\"form[data-fn='mid'] .result tr\")].map(r => r.textContent)")
        self.assertEqual(cells, ["x0.5", "y1.5"])
        # a keyed list result: a table with its columns
        self.send("cheap", {"max": "1"})
        self.result("cheap", "ok")
        rows = b.run("return [...document.querySelectorAll(\"form[data-fn='cheap'] .result tbody tr\")].map(r => [...r.cells].map(c => c.textContent))")
        self.assertEqual(rows, [["fig", "0.5"], ["lime", "0.25"]])
        # a seq parameter is a JSON array; an event's declared result is shown after the commit
        self.assertIn("-> seq text", b.run("return document.querySelector(\"form[data-fn='missing'] .sig\").textContent"))
        self.send("missing", {"skus": "[oops"})
        self.assertIn("skus: not JSON", self.result("missing", "error")[1])
        self.send("missing", {"skus": '["fig", "nope"]'})
        state, text = self.result("missing", "ok")
        self.assertTrue(text.startswith("committed · seq"), text)
        self.assertIn("nope", text)
        self.assertNotIn("fig", text)
        # a bool parameter is a checkbox
        self.assertEqual(b.run("return document.querySelector(\"form[data-fn='add'] input[name='active']\").type"), "checkbox")
        # ints beyond 2^53 go and come back exact
        self.send("big", {"n": "4611686018427387903"})
        self.assertTrue(self.result("big", "ok")[1].startswith("→ 9223372036854775806"))
        # a body over --body-limit: the server's 413 is shown
        self.send("echo", {"t": "x" * 400})
        state, text = self.result("echo", "error")
        self.assertTrue(text.startswith("error (413): the body is over the limit of 300 bytes"), text)
        self.shot("10-item-query.png", "form[data-fn='mid']")
        self.shot("11-list-query.png", "form[data-fn='cheap']")
        self.shot("12-body-too-large.png", "form[data-fn='echo']")

    def query_requests(self):
        c = Conn(self.server.port)
        _, _, text = c.request("GET", "/metrics")
        c.close()
        return sum(int(v) for v in re.findall(rb'^pure_requests_total\{route="query",status="\d+"\} (\d+)$', text, re.M))


class TokenTest(unittest.TestCase):
    def test_token_is_asked_and_kept_in_memory(self):
        b = BROWSER
        folder = tempfile.mkdtemp(prefix="pure-console-token-")
        self.addCleanup(shutil.rmtree, folder, True)
        token = "s3cret-console-token"
        with open(os.path.join(folder, "token"), "w") as f:
            f.write(token + "\n")
        server = Server(find_binary(), [LEDGER], "--token-file", os.path.join(folder, "token"))
        self.addCleanup(server.stop)
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelector('#token-state')?.textContent.startsWith('token: not set')", what="the token pill")
        for name, value in {"id": "7", "owner": "tia", "deposit": "12"}.items():
            b.type(f"form[data-fn='open'] input[name='{name}']", value)
        b.click("form[data-fn='open'] button[type=submit]")
        b.wait("return document.querySelector('#token-dialog').open", what="the token dialog")
        self.assertEqual(self.count(server), 0, "nothing is sent before the token is given")
        b.screenshot(os.path.join(OUT, "09-token-dialog.png"))
        b.type("#token-input", "wrong")
        b.click("#token-ok")
        # refused with 401, and asked again
        b.wait("return document.querySelector('#token-dialog').open && document.querySelector('#token-why').textContent.includes('refused')",
               what="the token asked again")
        b.type("#token-input", token)
        b.click("#token-ok")
        got = b.wait("const r = document.querySelector(\"form[data-fn='open'] .result\"); return r.dataset.state === 'ok' && r.textContent",
                     what="the event committed with the token")
        self.assertTrue(got.startswith("committed · seq 1"), got)
        self.assertEqual(self.count(server), 1)
        self.assertEqual(b.text("#token-state").split("\n")[0].strip()[:10], "token: set")
        # the token is in no storage, no cookie, and not left in the page
        left = b.run("return [localStorage.length, sessionStorage.length, document.cookie, "
                     "document.querySelector('#token-input').value, document.documentElement.outerHTML.includes(arguments[0])]",
                     token)
        self.assertEqual(left, [0, 0, "", "", False])
        # reloading the tab forgets it
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelector('#token-state')?.textContent.startsWith('token: not set')", what="forgotten")

    def count(self, server):
        c = Conn(server.port)
        _, body = c.json("GET", "/v1/bank_ledger")
        c.close()
        return next(l["count"] for l in body["lists"] if l["name"] == "accounts")


class ReadTokenTest(unittest.TestCase):
    """A server with a read token: the console asks for a token before it can show anything but
    /health, and for one of scope write when an event is refused with 403."""

    def test_reads_need_a_token_then_events_one_of_scope_write(self):
        b = BROWSER
        folder = tempfile.mkdtemp(prefix="pure-console-scopes-")
        self.addCleanup(shutil.rmtree, folder, True)
        with open(os.path.join(folder, "tokens"), "w") as f:
            f.write("# the console's read and write tokens\nread reader-token\nwrite writer-token\n")
        server = Server(find_binary(), [LEDGER], "--token-file", os.path.join(folder, "tokens"))
        self.addCleanup(server.stop)
        b.get(f"http://127.0.0.1:{server.port}/")
        why = b.wait("return document.querySelector('#token-dialog').open && document.querySelector('#token-why').textContent",
                     what="the token dialog before anything is shown")
        self.assertIn("The server needs a token (401): GET /v1/bank_ledger needs a token of scope read", why)
        b.screenshot(os.path.join(OUT, "13-read-token-dialog.png"))
        b.type("#token-input", "reader-token")
        b.click("#token-ok")
        b.wait("return document.querySelector('#lists table') !== null && document.querySelector('pre.source') !== null",
               what="the lists and the source, read with the token")
        for name, value in {"id": "3", "owner": "ria", "deposit": "5"}.items():
            b.type(f"form[data-fn='open'] input[name='{name}']", value)
        b.click("form[data-fn='open'] button[type=submit]")
        why = b.wait("return document.querySelector('#token-dialog').open && document.querySelector('#token-why').textContent",
                     what="a token of scope write asked for")
        self.assertIn("The server refused the token (403)", why)
        self.assertIn("needs a token of scope write: the token sent has scope read", why)
        b.type("#token-input", "writer-token")
        b.click("#token-ok")
        got = b.wait("const r = document.querySelector(\"form[data-fn='open'] .result\"); return r.dataset.state === 'ok' && r.textContent",
                     what="the event committed with the write token")
        self.assertTrue(got.startswith("committed · seq 1"), got)
        b.screenshot(os.path.join(OUT, "14-write-token-used.png"))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        OUT = os.path.abspath(sys.argv.pop(1))
    found, why = find_browser()
    if not found:
        print(f"console.browser: skipped: {why}")
        sys.exit(77)
    started = time.monotonic()
    program = unittest.main(exit=False, verbosity=2)
    print(f"console.browser: {time.monotonic() - started:.1f} s; screenshots in {OUT}")
    sys.exit(0 if program.result.wasSuccessful() else 1)
