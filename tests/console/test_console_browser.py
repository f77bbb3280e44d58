"""tests/console/test_console_browser.py — the web console in a real browser: Debian's chromium,
headless, driven through chromedriver (webdriver.py), against a real pure-serve on 127.0.0.1
serving examples/bank_ledger.pure. Opens the console, pages through a list and filters it,
runs queries (one refused by the form's own check, one answered, one failing with 409), sends
an event that commits and one that fails, checks the source and the live figures, and then the
token flow of a server started with --token-file. A screenshot of each step goes to the output
directory (argument 1; ctest passes build/tests/console). Exits 77 (ctest: skipped) when
chromium or chromedriver is not installed."""
import json
import os
import re
import shutil
import signal
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
from page_checks import CONTRAST, FIELDS  # noqa: E402

LEDGER = os.path.join(ROOT, "examples", "bank_ledger.pure")
SHOP = os.path.join(ROOT, "tests", "serve", "shop.pure")
OUT = os.environ.get("PURE_CONSOLE_OUT") or os.path.join(ROOT, "build", "tests", "console")
ACCOUNTS = 23  # three pages of 10

ROWS = "[...document.querySelectorAll('#rows tbody tr')].map(r => r.cells[0].textContent)"
RESULT = "const b = document.querySelector(`form[data-fn='${arguments[0]}'] .result`); return b ? [b.dataset.state || '', b.textContent] : null"


BROWSER = None  # one chromium for every test


def assert_contrast(test, where, at_least=10):
    """Every text the page shows now (at least this many) has contrast 4.5:1 or more (WCAG AA)."""
    checked, failures = test.b.run(CONTRAST)
    test.assertGreaterEqual(checked, at_least, where)
    test.assertEqual(failures, [], f"contrast below 4.5:1 ({where})")


def settle(test, fn):
    """Marks a form's result as not settled, so that the next result is not mistaken for it."""
    test.b.run(f"document.querySelector(`form[data-fn='{fn}'] .result`).dataset.state = ''")


def setUpModule():
    global BROWSER
    os.makedirs(OUT, exist_ok=True)
    (chromium, driver), _ = find_browser()
    BROWSER = Browser(chromium, driver)


def tearDownModule():
    if BROWSER:
        BROWSER.close()


class Page(unittest.TestCase):
    """A test of the console in the shared browser: screenshots, and forms filled and read."""

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

    def fill(self, fn, name, value):
        """Sets a field's value at once (typing 60,000 keys through the driver takes minutes)."""
        self.b.run("const i = document.querySelector(`form[data-fn='${arguments[0]}'] input[name='${arguments[1]}']`);"
                   "i.value = arguments[2]; i.dispatchEvent(new Event('input'))", fn, name, value)

    def send(self, fn, values):
        for name, value in values.items():
            self.b.type(f"form[data-fn='{fn}'] input[name='{name}']", str(value))
        settle(self, fn)
        self.b.click(f"form[data-fn='{fn}'] button[type=submit]")


class ConsoleTest(Page):
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

    def open_console(self):
        self.b.get(self.url)
        self.b.wait("return document.querySelector('#lists tr[data-list=accounts] .count')?.textContent === arguments[0]",
                    str(ACCOUNTS), what="the accounts row count")
        self.b.wait(f"return ({ROWS}).length === 10", what="the first page of accounts")

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
        assert_contrast(self, "the first page")
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
        assert_contrast(self, "query results and a refused field")
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
        assert_contrast(self, "committed and failed events")
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
        assert_contrast(self, "the source, highlighted")
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
        self.assertRegex(b.run(figure, "event-p99"), r"^(≤ \d+ µs|≤ [\d.]+ ms|≤ [\d.]+ s|> .*)$")
        self.assertRegex(b.run(figure, "store-memory"), r"^[\d.]+ (B|KiB|MiB)$")  # a small state: bytes, not a ratio
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
        assert_contrast(self, "the overview")

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
        assert_contrast(self, "item and list results, a 413")
        self.shot("10-item-query.png", "form[data-fn='mid']")
        self.shot("11-list-query.png", "form[data-fn='cheap']")
        self.shot("12-body-too-large.png", "form[data-fn='echo']")

    def test_7_paging_overlaps(self):
        """A fast double click on Next, and answers that come back out of order: the page shown
        and its label always belong together (issue 31)."""
        b = self.b
        self.open_console()
        # two clicks in the same moment: one page further, labelled as such
        b.run("const n = document.querySelector('#next'); n.click(); n.click();")
        b.wait(f"return ({ROWS})[0] === '11' && !document.querySelector('#next').disabled", what="page 2")
        self.assertEqual(b.run(f"return {ROWS}"), [str(i) for i in range(11, 21)])
        self.assertEqual(b.text("#page-info"), f"rows 11–20 of {ACCOUNTS}")
        b.run("const p = document.querySelector('#prev'); p.click(); p.click();")
        b.wait(f"return ({ROWS})[0] === '1' && !document.querySelector('#next').disabled", what="page 1")
        self.assertEqual(b.text("#page-info"), f"rows 1–10 of {ACCOUNTS}")
        self.assertTrue(b.run("return document.querySelector('#prev').disabled"))
        # while a page loads, Prev and Next wait for it
        b.run("window.__slow = 'limit=10&after=10'; window.__slowDone = false;"
              "if (!window.__fetch) window.__fetch = window.fetch;"
              "window.fetch = (url, options) => { const answer = window.__fetch(url, options);"
              "  return String(url).includes(window.__slow) ? answer.then((r) => new Promise((done) => setTimeout(() => { window.__slowDone = true; done(r); }, 800))) : answer; };")
        self.addCleanup(b.run, "if (window.__fetch) window.fetch = window.__fetch")
        b.click("#next")
        self.assertTrue(b.run("return document.querySelector('#next').disabled && document.querySelector('#prev').disabled"))
        self.assertEqual(b.run("return document.querySelector('#rows').getAttribute('aria-busy')"), "true")
        b.wait("return window.__slowDone", what="the slow page")
        b.wait(f"return ({ROWS})[0] === '11'", what="page 2 after the slow answer")
        self.assertEqual(b.text("#page-info"), f"rows 11–20 of {ACCOUNTS}")
        # a filter asked while another is under way: the slow older answer does not replace the newer one
        b.run("window.__slow = 'prefix=2'; window.__slowDone = false;")
        b.type("#prefix", "2")
        b.click("#filter")
        b.type("#prefix", "1")
        b.click("#filter")
        b.wait(f"return ({ROWS})[0] === '1'", what="the second filter's rows")
        b.wait("return window.__slowDone", what="the first filter's slow answer")
        time.sleep(0.3)  # what the slow answer would do, it has done by now
        self.assertEqual(b.run(f"return {ROWS}"), ["1"] + [str(i) for i in range(10, 19)])
        self.assertEqual(b.text("#page-info"), 'rows 1–10 with prefix "1"')
        self.shot("13-paging-overlaps.png", "#table")

    def query_requests(self):
        c = Conn(self.server.port)
        _, _, text = c.request("GET", "/metrics")
        c.close()
        return sum(int(v) for v in re.findall(rb'^pure_requests_total\{route="query",status="\d+"\} (\d+)$', text, re.M))


class ShopTest(Page):
    """Values as a person meets them in the shop module: long, empty, padded and hostile texts in
    a list, large results, placeholders that follow the type, and form fields a screen reader can
    name (issue 31's console findings)."""
    LONG = "L" + "0123456789" * 1024  # a 10 KB value: once a table 78,456 px wide
    XSS = '<img src=x onerror="window.__pwned = 1">'

    def shop(self, skus):
        """A fresh server of the shop module with these skus in stock (price 0.5 each), and the
        console open on it."""
        self.server = Server(find_binary(), [SHOP], "--sync", "none")
        self.addCleanup(self.server.stop)
        c = Conn(self.server.port)
        for sku in skus:
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": sku, "qty": 5, "price": 0.5, "active": True})[0], 200)
        c.close()
        self.b.get(f"http://127.0.0.1:{self.server.port}/")
        self.b.wait("return document.querySelectorAll('#rows tbody tr').length === Math.min(10, Math.max(1, arguments[0]))",
                    len(skus), what="the stock rows")

    def shop_with_values(self):
        self.shop(["", "  padded\t", self.LONG, self.XSS, "bell\u0007"])

    def test_long_values_and_whitespace(self):
        b = self.b
        self.shop_with_values()
        fits = ("const t = document.querySelector('#rows'), box = t.closest('.scroll');"
                "return [t.scrollWidth, box.clientWidth, document.documentElement.scrollWidth, window.innerWidth]")
        table, box, page, window = b.run(fits)
        self.assertLessEqual(table, box, "the table fits its panel")
        self.assertLessEqual(page, window, "the page does not scroll sideways")
        cells = "return [...document.querySelectorAll('#rows tbody tr')].map(r => r.cells[0])"
        # sorted keys: "", "  padded\t", "<img ...>", "L0123...", "bell\a"
        marks = b.run(f"return ({cells.replace('return ', '')}).map(c => [...c.querySelectorAll('.ws')].map(w => [w.textContent, w.title]))")
        self.assertEqual(marks[0], [['""', "empty text"]])
        self.assertEqual(marks[1], [["··", "whitespace at the start: 2 characters"], ["⇥", "whitespace at the end: 1 character"]])
        self.assertEqual(marks[4], [["\\u0007", "control character U+0007"]])
        texts = b.run(f"return ({cells.replace('return ', '')}).map(c => c.querySelector('.val').firstChild.textContent)")
        self.assertEqual(texts[2], self.XSS, "the payload shows as text")
        self.assertEqual(b.run("return [document.querySelectorAll('#module img').length, window.__pwned === undefined]"), [0, True])
        # the long value: its start and what is hidden, at most three lines high
        long_cell = "document.querySelectorAll('#rows tbody tr')[3].cells[0]"
        shown, button, height = b.run(f"const c = {long_cell}; return [c.querySelector('.val-text').textContent, "
                                      "c.querySelector('button.more').textContent, c.getBoundingClientRect().height]")
        self.assertEqual(shown, self.LONG[:160] + "…")
        self.assertEqual(button, f"+{len(self.LONG) - 160:,} characters")
        self.assertLess(height, 100)
        self.shot("14-long-values.png", "#table")
        # a click shows it all, in a box that scrolls, and the table still fits
        b.click("#rows tbody tr:nth-child(4) td:first-child .val-text")
        b.wait(f"return {long_cell}.querySelector('.val.open')", what="the long value open")
        self.assertEqual(b.run(f"return {long_cell}.querySelector('.val-text').textContent"), self.LONG)
        self.assertEqual(b.run(f"return {long_cell}.querySelector('button.more').getAttribute('aria-expanded')"), "true")
        table, box, page, window = b.run(fits)
        self.assertLessEqual(table, box)
        self.assertLessEqual(page, window)
        self.shot("15-long-value-open.png", "#table")
        assert_contrast(self, "marked whitespace and a long value")
        b.click("#rows tbody tr:nth-child(4) td:first-child button.more")
        b.wait(f"return !{long_cell}.querySelector('.val.open')", what="the long value closed again")
        # and from the keyboard: the button takes Enter
        b.type("#rows tbody tr:nth-child(4) td:first-child button.more", "\ue007", clear=False)
        b.wait(f"return {long_cell}.querySelector('.val.open')", what="the long value opened by Enter")
        # the journal's lines hold the same texts
        b.click("#lists tr[data-list=journal] button")
        b.wait("return document.querySelectorAll('#rows tbody tr').length === 5 && "
               "document.querySelector('#rows th')?.textContent.startsWith('line')", what="the journal")
        self.assertEqual(b.run("return [...document.querySelectorAll('#rows tbody td')].map(c => c.querySelector('.ws')?.textContent || null)"),
                         ["·", "⇥", None, None, "\\u0007"])  # "add " ends in a space
        self.assertLessEqual(b.run(fits)[0], b.run(fits)[1])

    def test_large_results(self):
        b = self.b
        skus = ["", "  padded\t", self.LONG, self.XSS, "bell\u0007"] + [f"r{i:03}" for i in range(250)]
        self.shop(skus)
        # a list of 255 rows: 100 at first, then 100 more a click
        self.send("cheap", {"max": "1"})
        self.result("cheap", "ok")
        rows = "return document.querySelectorAll(\"form[data-fn='cheap'] .result tbody tr\").length"
        footer = "form[data-fn='cheap'] .rows-footer"
        self.assertEqual(b.run(rows), 100)
        self.assertEqual(b.text(footer), "100 of 255 rows shown show 100 more")
        self.shot("16-large-result.png", "form[data-fn='cheap'] .rows-footer")
        b.click("form[data-fn='cheap'] .rows-footer button.more")
        self.assertEqual(b.run(rows), 200)
        b.click("form[data-fn='cheap'] .rows-footer button.more")
        self.assertEqual(b.run(rows), 255)
        self.assertEqual(b.text(footer), "255 rows")
        # a long sequence of texts: its first 1,000 characters and the count of the rest
        self.send("lines", {})
        state, text = self.result("lines", "ok")
        whole = json.dumps([f"add {sku}" for sku in skus], ensure_ascii=False)
        self.assertLess(len(text), 1200)
        self.assertIn("(255)", text)
        hidden = len(whole) - 1000
        self.assertIn(f"show more ({hidden:,} characters hidden)", text)
        self.shot("17-long-text-result.png", "form[data-fn='lines']")
        b.click("form[data-fn='lines'] .result button.more")
        self.assertFalse(b.run("return document.querySelector(\"form[data-fn='lines'] .result button.more\").hidden === false"))
        # a text result of 60,000 characters
        self.fill("echo", "t", "y" * 60000)
        self.send("echo", {})
        state, text = self.result("echo", "ok")
        self.assertLess(len(text), 1200)
        self.assertIn(f"show more ({60002 - 1000:,} characters hidden)", text)
        # a failed event's long reason, and an error's, are bounded the same way
        self.fill("order", "sku", "z" * 5000)
        self.send("order", {"id": "1", "qty": "1"})
        state, text = self.result("order", "failed")
        self.assertTrue(text.startswith("failed (409): no sku zzz"), text[:40])
        self.assertIn(f"show more ({len('no sku ') + 5000 - 1000:,} characters hidden)", text)
        assert_contrast(self, "large results")

    def test_placeholders_follow_the_type(self):
        b = self.b
        self.shop(["a"])
        placeholder = "return document.querySelector(`form[data-fn='${arguments[0]}'] input[name='${arguments[1]}']`).placeholder"
        expected = {("order_lines", "picks"): '[{"sku": "a", "qty": 1}]', ("order_lines", "notes"): '["a", "b"]',
                    ("missing", "skus"): '["a", "b"]', ("sum_all", "xs"): "[1.5, 2.0]", ("flag", "on"): "[true, false]",
                    ("reversed", "picks"): '[{"sku": "a", "qty": 1}]', ("add", "qty"): "whole number", ("add", "sku"): "text"}
        for (fn, name), want in expected.items():
            self.assertEqual(b.run(placeholder, fn, name), want, f"{fn}.{name}")
        # each example is a value the server takes
        self.send("order_lines", {"id": "77", "picks": expected[("order_lines", "picks")], "notes": expected[("order_lines", "notes")]})
        state, text = self.result("order_lines", "ok")
        self.assertTrue(text.startswith("committed · seq"), text)
        self.send("sum_all", {"xs": expected[("sum_all", "xs")]})
        self.assertTrue(self.result("sum_all", "ok")[1].startswith("→ 3.5"))
        self.shot("18-placeholders.png", "form[data-fn='order_lines']")

    def test_fields_have_names(self):
        b = self.b
        self.shop(["fig"])
        self.assertEqual(b.run(FIELDS), [])
        # what a screen reader announces for each field: its name and type
        labels = {}
        for ref in b.find_all("#module form.call input"):
            labels[b.run("return arguments[0].id", {"element-6066-11e4-a52e-4f735466cecf": ref})] = b.label(ref)
        self.assertGreater(len(labels), 20)
        self.assertEqual(labels["event-add-active"], "active bool")
        self.assertEqual(labels["event-add-sku"], "sku text")
        self.assertEqual(labels["query-mid-l.x1"], "x1 num")
        self.assertEqual(labels["event-order_lines-picks"], "picks seq Pick")
        self.assertEqual([k for k, v in labels.items() if not v], [])
        self.assertEqual(b.label(b.find("#prefix")), "key prefix filter")
        self.assertEqual(b.label(b.find("#limit")), "rows per page")
        # a field that fails its check says so, and names the note that says why
        self.send("big", {"n": "abc"})
        self.result("big", "error")
        field = "document.getElementById('query-big-n')"
        invalid, note = b.run(f"const f = {field}; return [f.getAttribute('aria-invalid'), "
                              "document.getElementById(f.getAttribute('aria-describedby')).textContent]")
        self.assertEqual((invalid, note), ("true", "'abc' is not a whole number"))
        self.assertEqual(b.run(FIELDS), [])
        self.shot("19-invalid-field.png", "form[data-fn='big']")
        assert_contrast(self, "a field that failed its check")
        b.type("#query-big-n", "4")
        self.assertEqual(b.run(f"const f = {field}; return [f.getAttribute('aria-invalid'), f.getAttribute('aria-describedby')]"), [None, None])
        # a seq's elements are checked by the server: its 400 marks the field the same way
        self.send("missing", {"skus": "[1, 2]"})
        state, text = self.result("missing", "error")
        self.assertTrue(text.startswith("rejected (400): parameter 'skus[0]': expected text"), text)
        field = "document.getElementById('event-missing-skus')"
        invalid, note = b.run(f"const f = {field}; return [f.getAttribute('aria-invalid'), "
                              "document.getElementById(f.getAttribute('aria-describedby')).textContent]")
        self.assertEqual(invalid, "true")
        self.assertTrue(note.startswith("skus[0]: expected text"), note)
        self.assertEqual(b.run(FIELDS), [])


class OfflineTest(Page):
    def test_server_gone_and_back(self):
        """A server that stops answering: a banner says since when, rows and figures are marked
        as from before; when it answers again, all is fresh (issue 31)."""
        b = self.b
        folder = tempfile.mkdtemp(prefix="pure-console-offline-")
        self.addCleanup(shutil.rmtree, folder, True)
        server = Server(find_binary(), [LEDGER], data=folder)
        port = server.port
        c = Conn(port)
        for i in range(1, 4):
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": i, "owner": f"o{i}", "deposit": 10})[0], 200)
        c.close()
        b.get(f"http://127.0.0.1:{port}/")
        b.wait(f"return ({ROWS}).length === 3 && document.querySelector('[data-figure=events-rate]')", what="the console")
        self.assertTrue(b.run("return document.querySelector('#offline').hidden"))
        server.kill()
        server.stop()
        b.wait("return !document.querySelector('#offline').hidden && document.body.classList.contains('offline')",
               timeout=10, what="the disconnected banner")
        self.assertEqual(b.text("#health"), "disconnected")
        self.assertRegex(b.text("#offline"), r"^Disconnected: the server has not answered since .+\. The rows, results and figures")
        self.assertEqual(b.run(f"return {ROWS}"), ["1", "2", "3"], "what was shown stays, marked")
        self.send("balance", {"id": "1"})
        self.assertIn("no answer from the server", self.result("balance", "error")[1])
        self.send("open", {"id": "9", "owner": "x", "deposit": "1"})
        self.assertIn("whether the event committed is known once the server answers again", self.result("open", "error")[1])
        b.run("window.scrollTo(0, 0)")
        self.shot("20-disconnected.png")
        assert_contrast(self, "disconnected")
        # the server comes back (on its port, with its data) and has moved on meanwhile
        again = Server(find_binary(), [LEDGER], data=folder, port=port)
        self.addCleanup(again.stop)
        c = Conn(port)
        self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": 4, "owner": "o4", "deposit": 10})[0], 200)
        c.close()
        b.wait("return document.querySelector('#offline').hidden && !document.body.classList.contains('offline')",
               timeout=10, what="the console back")
        b.wait(f"return ({ROWS}).length === 4", what="the rows refreshed")
        b.wait("return document.querySelector('#lists tr[data-list=accounts] .count')?.textContent === '4'", what="counts refreshed")
        self.assertEqual(b.text("#health"), "serving")
        b.wait("return document.querySelector('[data-figure=queue] .note')?.textContent === 'seq 4 visible'", what="fresh figures")
        self.send("balance", {"id": "4"})
        self.assertTrue(self.result("balance", "ok")[1].startswith("→ 10.0"))


HISTORY = "[...document.querySelectorAll('#history-rows tbody tr[data-seq]')].map(r => Number(r.dataset.seq))"


class HistoryTest(Page):
    """The history view (GET /v1/MODULE/events, newest first, paged, filtered) and reading the
    module as of a past sequence: from a row, typed, past retention (410), and back (issue 34)."""

    def history(self, want, what):
        return self.b.wait(f"const got = {HISTORY}; return JSON.stringify(got) === JSON.stringify(arguments[0]) && got",
                           want, what=what)

    def set_and_click(self, values, button):
        """Sets fields (css: value) and clicks a button in one script: each WebDriver command costs
        a round trip, 0.1-0.2 s on a loaded machine."""
        self.b.run("for (const [css, v] of Object.entries(arguments[0])) { const e = document.querySelector(css); "
                   "e.value = v; e.dispatchEvent(new Event('input')); } document.querySelector(arguments[1]).click()",
                   values, button)

    def call(self, fn, values):
        """A form sent in one script; its result is then marked unsettled."""
        settle(self, fn)
        self.set_and_click({f"form[data-fn='{fn}'] input[name='{k}']": v for k, v in values.items()},
                           f"form[data-fn='{fn}'] button[type=submit]")

    def balance_row(self, value, what):
        self.b.wait("return document.querySelector('#rows tbody tr')?.cells[2].textContent === arguments[0]", value, what=what)

    def test_history_and_as_of(self):
        b = self.b
        server = Server(find_binary(), [LEDGER])
        self.addCleanup(server.stop)
        c = Conn(server.port)
        for i in range(1, 13):  # seq 1..12
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": i, "owner": f"o{i}", "deposit": 10})[0], 200)
        c.close()  # (an idle connection is closed after --request-timeout-ms)
        b.get(f"http://127.0.0.1:{server.port}/")
        self.history(list(range(12, 2, -1)), "the newest 10 events")
        self.assertEqual(b.text("#history-info"), "10 events, newest first: seq 12 down to 3")
        # events sent from the console: one commits (13), one fails (14); the view follows them
        self.call("transfer", {"from": "1", "to": "2", "amount": "4"})
        self.result("transfer", "ok")
        self.call("transfer", {"from": "2", "to": "1", "amount": "5000"})
        self.result("transfer", "failed")
        self.history(list(range(14, 4, -1)), "the two events sent")
        row = "const r = document.querySelector(`#history-rows tr[data-seq='${arguments[0]}']`); return [...r.cells].slice(2, 5).map(c => c.textContent).concat([r.className])"
        self.assertEqual(b.run(row, 13), ["transfer", "{from: 1, to: 2, amount: 4.0}", "committed", ""])
        self.assertEqual(b.run(row, 14), ["transfer", "{from: 2, to: 1, amount: 5000.0}",
                                          "failed: insufficient funds in 2: 14.00 < 5000.00", "failed-event"])
        self.shot("40-history.png", "#history")
        assert_contrast(self, "the history view")
        # paged: Older, then Newer again
        self.assertTrue(b.run("return document.querySelector('#history-newer').disabled"))
        b.click("#history-older")
        self.history([4, 3, 2, 1], "the older page")
        self.assertTrue(b.run("return document.querySelector('#history-older').disabled"))
        b.click("#history-newer")
        self.history(list(range(14, 4, -1)), "the newer page again")
        # filters: the event name, then a time (the API's event= and since=)
        self.set_and_click({"#history-event": "transfer"}, "#history-filter")
        self.history([14, 13], "the transfers only")
        c = Conn(server.port)
        _, page = c.json("GET", "/v1/bank_ledger/events?after=13")
        c.close()
        self.set_and_click({"#history-event": "", "#history-since": str(page["events"][0]["time"])}, "#history-filter")
        self.history([14], "the events since seq 14's time")
        self.shot("41-history-filtered.png", "#history")
        # a bad filter: the API's 400, shown
        self.set_and_click({"#history-since": "yesterday"}, "#history-filter")
        got = b.wait("const e = document.querySelector('#history-error'); return !e.hidden && e.textContent", what="the 400")
        self.assertEqual(got, "GET /v1/…/events answered 400: since: expected milliseconds since 1970 or a UTC time like "
                              "2026-12-07T02:30:00Z, got 'yesterday'")
        self.set_and_click({"#history-since": ""}, "#history-filter")
        self.history(list(range(14, 4, -1)), "every event again")
        self.assertTrue(b.run("return document.querySelector('#history-error').hidden"))
        # as of this event (12, before the transfer): the list, queries; no events
        b.click("#history-rows tr[data-seq='12'] button.as-of-this")
        b.wait("return document.querySelector('#as-of').classList.contains('past')", what="as of 12")
        self.assertEqual(b.text("#as-of-state"), "Showing the state as of sequence 12: lists and queries read as_of=12. "
                                                 "Events cannot be sent while viewing the past.")
        self.balance_row("10.0", "balance 1 as of 12")
        self.assertEqual(b.text("#table-count"), "12 rows as of seq 12")
        self.call("balance", {"id": "1"})
        self.assertTrue(self.result("balance", "ok")[1].startswith("→ 10.0 · as of seq 12"))
        self.call("balance", {"id": "13"})  # no account 13 then: a 409 naming the sequence it read
        self.assertRegex(self.result("balance", "failed")[1], r"^failed \(409\): runtime error at \d+:\d+: no item with key 13 "
                                                              r"in stored list 'accounts' · as of seq 12")
        self.assertTrue(b.run("return [...document.querySelectorAll(\"form[data-kind='event'] button[type=submit]\")].every(b => b.disabled)"))
        self.assertIn("events cannot be sent", b.text("#events-past"))
        b.run("window.scrollTo(0, 0)")
        self.shot("42-as-of.png")
        assert_contrast(self, "as of a past sequence")
        # typed: as of 0, the empty state
        self.set_and_click({"#as-of-seq": "0"}, "#as-of-set")
        b.wait("return document.querySelector('#as-of-state').textContent.startsWith('Showing the state as of sequence 0:')",
               what="as of 0")
        b.wait("return document.querySelector('#rows tbody td')?.textContent === 'empty'", what="no accounts at 0")
        self.set_and_click({"#as-of-seq": "99"}, "#as-of-set")  # beyond the present: the server's 400; 0 stays
        got = b.wait("const e = document.querySelector('#as-of-error'); return !e.hidden && e.textContent", what="the 400")
        self.assertEqual(got, "not read as of 99 (400): as_of: sequence 99 is beyond the present: the newest durable sequence is 14")
        self.assertTrue(b.text("#as-of-state").startswith("Showing the state as of sequence 0:"))
        # back to the present
        b.click("#as-of-clear")
        b.wait("return document.querySelector('#as-of-state').textContent === 'Showing the present.'", what="the present")
        self.balance_row("6.0", "balance 1 now")
        self.assertEqual(b.text("#table-count"), "12 rows")
        self.call("balance", {"id": "1"})
        state, text = self.result("balance", "ok")
        self.assertNotIn("as of", text)
        self.assertFalse(b.run("return document.querySelector(\"form[data-fn='open'] button[type=submit]\").disabled"))
        self.assertIsNone(b.run("return document.querySelector('#events-past')"))

    def test_newest_first_against_a_model(self):
        """history.js's newest-first paging over an API that pages oldest first: every record that
        matches, once, newest first, for random logs, page sizes and filters, also when the API
        stops a page early (its scan limit: next_after with few records)."""
        b = self.b
        server = Server(find_binary(), [LEDGER])
        self.addCleanup(server.stop)
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelector('#history-rows')", what="the console")
        bad = b.run(r"""
          return import('./console/history.js').then(async (h) => {
            let seed = 34;
            const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
            const num = (n) => ({ text: String(n) });
            // the API: records after `after` and before `before`, oldest first; at most `limit`, and
            // at most `scan` records looked at (then next_after is the last one looked at)
            const api = (records, scan) => async (p) => {
              const out = [];
              let looked = 0, next = null;
              for (const r of records) {
                if (r.seq <= Number(p.after) || r.seq >= Number(p.before)) continue;
                if (out.length === Number(p.limit)) { next = out[out.length - 1].sequence.text; break; }
                looked++;
                if (!p.event || r.event === p.event) out.push({ sequence: num(r.seq), event: r.event });
                if (looked === scan) { next = String(r.seq); break; }
              }
              return { status: 200, json: { events: out, next_after: next === null ? null : num(next) } };
            };
            const bad = [];
            for (let trial = 0; trial < 60; trial++) {
              const n = Math.floor(random() * 2500), share = random(), records = [];
              for (let s = 1; s <= n; s++) records.push({ seq: s, event: random() < share ? 'a' : 'b' });
              const limit = h.HISTORY_LIMITS[trial % 3], scan = trial % 2 ? 7 : Infinity;
              for (const filters of [{}, { event: 'a' }]) {
                let below = n + 1, got = [];
                for (let pages = 0; pages < 3000; pages++) {
                  const r = await h.newestBefore(api(records, scan), below, 0, limit, filters);
                  got.push(...r.records.map((x) => Number(x.sequence.text)));
                  if (r.complete) break;
                  below = h.olderBelow(r, limit);
                }
                const want = records.filter((r) => !filters.event || r.event === filters.event).map((r) => r.seq).reverse();
                if (JSON.stringify(got) !== JSON.stringify(want)) bad.push({ n, limit, scan: String(scan), filters, got: got.length, want: want.length });
              }
            }
            return bad;
          });""")
        self.assertEqual(bad, [])

    def test_past_retention(self):
        """As of a sequence retention removed: the 410's oldest readable sequence, and a button
        that reads as of it."""
        b = self.b
        server = Server(find_binary(), [LEDGER], "--checkpoint-mb", "0.0005", "--segment-mb", "0.001", "--retain", "none")
        self.addCleanup(server.stop)
        c = Conn(server.port)
        self.addCleanup(c.close)
        for i in range(1, 41):
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": i, "owner": f"o{i}", "deposit": 1})[0], 200)
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait(f"return ({ROWS}).length === 10", what="the accounts")
        b.type("#as-of-seq", "1")
        b.click("#as-of-set")
        got = b.wait("const e = document.querySelector('#as-of-error'); return !e.hidden && e.textContent", what="the 410")
        m = re.fullmatch(r"not read as of 1 \(410\): as_of: sequence 1 is past the retention window: the oldest sequence "
                         r"this directory can be read as of is (\d+)\. The oldest readable sequence is (\d+): Read as of (\d+)", got)
        self.assertTrue(m, got)
        self.assertEqual(len(set(m.groups())), 1, got)
        self.assertGreater(int(m.group(1)), 1)
        self.shot("43-as-of-410.png", "#as-of")
        assert_contrast(self, "a 410")
        for _ in range(5):  # a checkpoint may remove that point meanwhile: then its 410 names the next
            oldest = b.run("return document.querySelector('#as-of-oldest')?.textContent")
            b.click("#as-of-oldest")
            got = b.wait("return document.querySelector('#as-of').classList.contains('past') ? 'set' : "
                         "(!document.querySelector('#as-of-error').hidden && document.querySelector('#as-of-error').textContent)",
                         what="as of the oldest")
            if got == "set":
                break
        self.assertEqual(got, "set")
        self.assertEqual(b.text("#table-count"), f"{oldest.split()[-1]} rows as of seq {oldest.split()[-1]}")


class UpgradeTest(Page):
    SOURCE = ("list accounts by id: int { owner: text, amount: num }\n"
              "event open(id: int, owner: text, v: num) { accounts[id] = { owner: owner, amount: v } }\n")

    def test_plan_then_apply(self):
        """The upgrade panel: a new source's plan (PUT ?plan=1, nothing changed), Apply only after
        a plan of that text, a plan that drops data not allowed without the box ticked, and the
        module shown again at version 2 with every row (issue 33, item 4)."""
        b = self.b
        folder = tempfile.mkdtemp(prefix="pure-console-upgrade-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "bank.pure")
        with open(path, "w") as f:
            f.write(self.SOURCE)
        server = Server(find_binary(), [path], data=os.path.join(folder, "data"))
        self.addCleanup(server.stop)
        c = Conn(server.port)
        for i in range(1, 4):
            self.assertEqual(c.json("POST", "/v1/bank/open", {"id": i, "owner": f"o{i}", "v": 1.5})[0], 200)
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelector('#upgrade-source')?.value === arguments[0]", self.SOURCE,
               what="the upgrade panel with the serving source")
        self.assertTrue(b.run("return document.querySelector('#upgrade-apply').disabled"))
        settled = ("const r = document.querySelector('#upgrade-result'); "
                   "return r.dataset.state && r.dataset.state !== 'pending' ? [r.dataset.state, r.textContent] : null")

        def plan(source):
            b.run("const t = document.querySelector('#upgrade-source'); t.value = arguments[0]; "
                  "t.dispatchEvent(new Event('input')); document.querySelector('#upgrade-result').dataset.state = ''",
                  source)
            b.click("#upgrade-plan")
            return b.wait(settled, what="the plan's answer")

        # a dropped field: planned, not allowed, Apply stays off, nothing changed
        state, text = plan(self.SOURCE.replace(", amount: num", "").replace(", amount: v", ""))
        self.assertEqual(state, "error", text)
        self.assertIn("not allowed: ", text)
        self.assertIn("field dropped: amount", b.text("#upgrade-plan-text"))
        self.assertTrue(b.run("return document.querySelector('#upgrade-apply').disabled"))
        # an added field: allowed; an edit after the plan takes it back
        added = self.SOURCE.replace("amount: num }", "amount: num, level: int = 3 }")
        state, text = plan(added)
        self.assertEqual((state, text), ("ok", "version 1 → 2: review the plan, then Apply"))
        self.assertIn("accounts: 3 rows: field added: level: int = 3", b.text("#upgrade-plan-text"))
        self.assertFalse(b.run("return document.querySelector('#upgrade-apply').disabled"))
        self.shot("30-upgrade-plan.png", "#upgrade")
        b.run("const t = document.querySelector('#upgrade-source'); t.value += ' '; t.dispatchEvent(new Event('input'))")
        self.assertTrue(b.run("return document.querySelector('#upgrade-apply').disabled"))
        self.assertEqual(c.json("GET", "/v1/bank")[1]["version"], 1, "a plan changes nothing")
        state, text = plan(added)
        b.run("document.querySelector('#upgrade-result').dataset.state = ''")
        b.click("#upgrade-apply")
        state, text = b.wait(settled, what="the upgrade's answer")
        self.assertEqual(state, "ok", text)
        self.assertRegex(text, r"^upgraded to version 2 at sequence 4 \(pause [\d.]+ ms\)$")
        self.assertEqual(c.json("GET", "/v1/bank")[1]["version"], 2)
        # the module is shown again: the new field in the lists table, every row there
        b.wait("return document.querySelector('#lists tr[data-list=accounts]')?.cells[2].textContent.includes('level: int')",
               what="the new field shown")
        b.wait(f"return ({ROWS}).length === 3", what="every row")
        c.close()


class FiguresTest(Page):
    # pure-serve's event latency buckets (serve/api.h, Latency::kBoundsUs), in seconds
    BOUNDS = ["5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
              "1", "5", "+Inf"]

    def metrics(self, per_bucket, total, state_bytes=954, structure_bytes=8500):
        lines, cumulative = [], 0
        for le, n in zip(self.BOUNDS, per_bucket + [0] * (len(self.BOUNDS) - len(per_bucket))):
            cumulative += n
            lines.append(f'pure_event_seconds_bucket{{le="{le}"}} {cumulative}')
        lines += [f"pure_event_seconds_sum {total:.6f}", f"pure_event_seconds_count {cumulative}",
                  f'pure_state_bytes{{module="m"}} {state_bytes}', f'pure_structure_bytes{{module="m"}} {structure_bytes}']
        return "\n".join(lines) + "\n"

    def figures(self, text, before=None):
        """figures.js's figures for metrics text (and an earlier poll 2 s before), by id."""
        got = self.b.run("return import('./console/figures.js').then((f) => {"
                         "  const poll = (t, at) => t === null ? null : { at, samples: f.parseMetrics(t) };"
                         "  return f.figures(poll(arguments[0], 2000), poll(arguments[1], 0), 'm', 2000); })", text, before)
        return {fig[0]: fig[1:] for fig in got}

    def test_p99_is_a_bound_that_holds(self):
        b = self.b
        server = Server(find_binary(), [LEDGER])
        self.addCleanup(server.stop)
        b.get(f"http://127.0.0.1:{server.port}/")
        b.wait("return document.querySelector('[data-figure=event-p99]')", what="the figures")
        one = [0] * 12 + [1]  # one event in (250 ms, 1 s]; it took 311 ms
        self.assertEqual(self.figures(self.metrics(one, 0.311))["event-p99"], ["p99 event latency", "≤ 311.0 ms", "since start, 1 event"])
        # the same event between two polls
        before = self.metrics([5], 0.0002)
        self.assertEqual(self.figures(self.metrics([5] + [0] * 11 + [1], 0.3112), before)["event-p99"],
                         ["p99 event latency", "≤ 311.0 ms", "last 2 s, 1 event"])
        # 100 events of 5-10 ms: the sum says little, the bucket bounds them
        self.assertEqual(self.figures(self.metrics([0] * 7 + [100], 0.75))["event-p99"][1], "≤ 10.0 ms")
        # 200 events, two of them slow: the p99 (the 198th) is a fast one
        self.assertEqual(self.figures(self.metrics([0] * 4 + [198] + [0] * 7 + [2], 198 * 0.0008 + 0.62))["event-p99"][1], "≤ 1.00 ms")
        # beyond the last bound, only that is known
        self.assertEqual(self.figures(self.metrics([0] * 14 + [1], 7.5))["event-p99"][1], "> 5.00 s")
        # memory per state byte only where the rows outweigh the store's fixed structure
        small = self.figures(self.metrics([], 0))["store-memory"]
        self.assertEqual(small, ["store memory", "9.2 KiB", "954 B of rows"])
        big = self.figures(self.metrics([], 0, state_bytes=2 << 20, structure_bytes=40960))["store-memory"]
        self.assertEqual(big, ["memory / state byte", "1.02", "2.0 MiB of rows"])
        # and the server's own figure: never above what the client waited for the one event
        c = Conn(server.port)
        started = time.monotonic()
        self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": 1, "owner": "o", "deposit": 1})[0], 200)
        waited_ms = (time.monotonic() - started) * 1000
        c.close()
        figure = "const f = document.querySelector('[data-figure=event-p99]'); return [f.querySelector('.value').textContent, f.querySelector('.note').textContent]"
        value, note = b.wait(f"const r = (() => {{ {figure} }})(); return r[1].endsWith(', 1 event') && r", timeout=8, what="the p99 of one event")
        m = re.fullmatch(r"≤ ([\d.]+) (µs|ms|s)", value)
        self.assertTrue(m, value)
        shown_ms = float(m.group(1)) * {"µs": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]
        self.assertLessEqual(shown_ms, waited_ms + 0.1, f"{value} for an event the client waited {waited_ms:.2f} ms for")
        self.assertEqual(b.run("return document.querySelector('[data-figure=store-memory] .label').textContent"), "store memory")
        # /metrics answered but refused: the figures say so instead of standing still
        b.run("if (!window.__fetch) window.__fetch = window.fetch;"
              "window.fetch = (url, options) => String(url) === 'metrics' ? Promise.resolve(new Response("
              "'{\"error\": \"not today\"}', { status: 503 })) : window.__fetch(url, options);")
        self.addCleanup(b.run, "if (window.__fetch) window.fetch = window.__fetch")
        got = b.wait("return document.querySelector('[data-figure=none]')?.textContent", timeout=8, what="no figures")
        self.assertEqual(got, "No figures: GET /metrics answered 503 (not today).")
        self.assertEqual(b.text("#health"), "serving")


class TokenTest(Page):
    def test_token_is_asked_and_kept_in_memory(self):
        b = self.b
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
        assert_contrast(self, "the token dialog", 5)
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
        # the history view reads with the token it was given, and shows the event
        b.wait(f"return JSON.stringify({HISTORY}) === '[1]'", what="the event in the history view")
        b.screenshot(os.path.join(OUT, "14-write-token-used.png"))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        OUT = os.path.abspath(sys.argv.pop(1))
    found, why = find_browser()
    if not found:
        print(f"console.browser: skipped: {why}")
        sys.exit(77)
    # ended from outside (ctest's timeout, timeout(1), Ctrl-C): the browser goes too
    signal.signal(signal.SIGTERM, lambda *_: (tearDownModule(), os._exit(143)))
    started = time.monotonic()
    program = unittest.main(exit=False, verbosity=2)
    print(f"console.browser: {time.monotonic() - started:.1f} s; screenshots in {OUT}")
    sys.exit(0 if program.result.wasSuccessful() else 1)
