"""Compare trafilatura and readability-lxml on help-centre pages: which keeps the article and drops the chrome.

Each page is built from known parts: the article (h1/h2/h3 headings, paragraphs, a list, a table) and the
boilerplate a real help centre wraps it in (navigation, cookie banner, sidebar of related links, feedback widget,
footer, scripts). For each library the script prints the share of the article's sentences kept (recall), the
share of boilerplate sentences kept (noise), the share of h2/h3 headings kept as headings, and ms per page.

    .venv/bin/python -m bench.knowledge.extraction_compare
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import lxml.html
import readability
import trafilatura


@dataclass(frozen=True)
class HelpPage:
    lang: str
    title: str
    # (level, heading, paragraphs); a paragraph starting with "- " lines is a list, "|" a table row block.
    sections: tuple[tuple[int, str, tuple[str, ...]], ...]
    boilerplate: tuple[str, ...]


EN_CHROME = (
    "We use cookies to improve your experience on our site.",
    "By clicking Accept you agree to our cookie policy.",
    "Was this article helpful?",
    "Still need help? Contact our support team.",
    "Copyright 2026 Northwind Scooters Ltd. All rights reserved.",
    "Subscribe to our newsletter for product news.",
)
ZH_CHROME = (
    "我们使用 Cookie 来改善您的浏览体验。",
    "点击接受即表示您同意我们的 Cookie 政策。",
    "这篇文章对您有帮助吗？",
    "还需要帮助？请联系我们的客服团队。",
    "版权所有 2026 北风滑板车有限公司。",
    "订阅我们的新闻通讯获取产品动态。",
)

PAGES = (
    HelpPage(
        "en",
        "Returning a scooter",
        (
            (
                2,
                "Who can return",
                (
                    "You can return a scooter within 30 days of delivery. The scooter must have fewer than 20 km on "
                    "the odometer. Accessories can be returned within 60 days if they are unused.",
                ),
            ),
            (
                2,
                "How to start a return",
                (
                    "Open the order in the Northwind app and tap Start return. We e-mail you a prepaid label within "
                    "one business day.",
                    "- Pack the scooter in its original box.\n- Attach the label to the top of the box.\n"
                    "- Drop the box at any DPD pickup point.",
                ),
            ),
            (
                3,
                "Refund times",
                (
                    "| Payment method | Refund time |\n| Credit card | 5 business days |\n| PayPal | 2 business days |",
                    "Refunds always go back to the original payment method. Shipping fees are not refunded.",
                ),
            ),
        ),
        EN_CHROME,
    ),
    HelpPage(
        "en",
        "Charging the battery",
        (
            (
                2,
                "Charging time",
                (
                    "A full charge of the S2 battery takes about 4 hours with the supplied charger. The fast "
                    "charger cuts this to 2.5 hours.",
                    "Charge the battery at temperatures between 0 and 40 degrees Celsius.",
                ),
            ),
            (
                2,
                "Battery warnings",
                (
                    "If the battery light blinks red, the battery is too cold to charge. Bring the scooter indoors "
                    "and wait one hour before charging.",
                ),
            ),
            (
                3,
                "Storing the scooter in winter",
                (
                    "Store the scooter with the battery charged to about 60 percent. Top it up once a month so it "
                    "never drops below 20 percent.",
                ),
            ),
        ),
        EN_CHROME,
    ),
    HelpPage(
        "zh",
        "退货政策",
        (
            (
                2,
                "退货条件",
                (
                    "您可以在签收后三十天内申请退货。滑板车的里程必须少于二十公里。未使用的配件可以在六十天内退货。",
                ),
            ),
            (
                2,
                "如何申请退货",
                (
                    "在北风应用中打开订单并点击申请退货。我们会在一个工作日内通过电子邮件发送预付运单。",
                    "- 使用原包装盒包装滑板车。\n- 将运单贴在箱子顶部。\n- 把箱子送到任意顺丰网点。",
                ),
            ),
            (
                3,
                "退款时间",
                (
                    "| 付款方式 | 退款时间 |\n| 信用卡 | 五个工作日 |\n| 支付宝 | 两个工作日 |",
                    "退款将原路返回到您的付款账户。运费不予退还。",
                ),
            ),
        ),
        ZH_CHROME,
    ),
    HelpPage(
        "zh",
        "账户与安全",
        (
            (
                2,
                "修改密码",
                (
                    "登录北风应用后，进入设置并选择账户安全。输入旧密码和新密码后点击保存即可完成修改。",
                    "新密码至少需要八个字符，并且必须包含一个数字。",
                ),
            ),
            (
                2,
                "双重验证",
                ("我们建议所有用户开启双重验证。开启后，每次在新设备登录时都需要输入短信验证码。",),
            ),
        ),
        ZH_CHROME,
    ),
)


def _block_html(text: str) -> str:
    if text.startswith("- "):
        items = "".join(f"<li>{line[2:]}</li>" for line in text.splitlines())
        return f"<ul>{items}</ul>"
    if text.startswith("|"):
        rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()]
        head = "".join(f"<th>{cell}</th>" for cell in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f"<p>{text}</p>"


def page_html(page: HelpPage) -> str:
    """The page as a help-centre CMS renders it: chrome around one article."""
    cookie, accept, helpful, contact, copyright_, newsletter = page.boilerplate
    nav = "".join(
        f'<li><a href="/{n}">{n.title()}</a></li>' for n in ("home", "orders", "battery", "account")
    )
    article = "".join(
        f"<h{level}>{heading}</h{level}>" + "".join(_block_html(block) for block in blocks)
        for level, heading, blocks in page.sections
    )
    related = "".join(f'<li><a href="/a/{i}">{page.title} {i}</a></li>' for i in range(1, 6))
    return f"""<!doctype html><html lang="{page.lang}"><head><meta charset="utf-8">
<title>{page.title} | Northwind Help Centre</title><script>window.dataLayer=[];function gtag(){{}}</script>
<style>body{{font-family:sans-serif}}</style></head><body>
<div id="cookie-banner" class="cookie-consent"><p>{cookie} {accept}</p><button>Accept</button></div>
<header class="site-header"><a class="logo" href="/">Northwind</a><nav><ul>{nav}</ul></nav>
<form class="search"><input name="q" placeholder="Search"></form></header>
<div class="container"><div class="breadcrumbs"><a href="/">Help Centre</a> &rsaquo; <a href="/c">Guides</a></div>
<main><article class="article-body"><h1>{page.title}</h1>{article}</article>
<section class="article-feedback"><p>{helpful}</p><button>Yes</button><button>No</button></section></main>
<aside class="sidebar"><h3>Related articles</h3><ul>{related}</ul><p>{contact}</p></aside></div>
<footer class="site-footer"><p>{newsletter}</p><p>{copyright_}</p></footer>
<script>document.querySelectorAll('a').forEach(function(a){{a.dataset.track=1}});</script></body></html>"""


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


def sentences(text: str) -> list[str]:
    parts: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("- ").strip()
        if line.startswith("|"):
            parts.extend(cell.strip() for cell in line.strip("|").split("|") if cell.strip())
            continue
        parts.extend(p.strip() for p in _SENTENCE_END.split(line) if p.strip())
    return parts


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@dataclass(frozen=True)
class Extracted:
    text: str
    headings: tuple[str, ...]


def run_trafilatura(html: str) -> Extracted:
    document = trafilatura.bare_extraction(html, include_tables=True, include_comments=False)
    # A Document unless as_dict=True: the isinstance only narrows the declared union for mypy.
    if document is None or isinstance(document, dict) or document.body is None:
        return Extracted("", ())
    body = document.body
    headings = tuple("".join(el.itertext()).strip() for el in body.iter("head"))
    return Extracted(" ".join(body.itertext()), headings)


def run_readability(html: str) -> Extracted:
    summary = readability.Document(html).summary(html_partial=True)
    tree = lxml.html.fromstring(summary)
    headings = tuple(el.text_content().strip() for el in tree.iter("h1", "h2", "h3", "h4"))
    return Extracted(tree.text_content(), headings)


LIBRARIES: dict[str, Callable[[str], Extracted]] = {
    "trafilatura": run_trafilatura,
    "readability-lxml": run_readability,
}


def measure(run: Callable[[str], Extracted], repeats: int = 5) -> dict[str, float]:
    kept_main = total_main = kept_noise = total_noise = kept_heads = total_heads = 0
    millis: list[float] = []
    for page in PAGES:
        html = page_html(page)
        started = time.perf_counter()
        for _ in range(repeats):
            result = run(html)
        millis.append((time.perf_counter() - started) * 1000 / repeats)
        text = _squash(result.text)
        main = [s for _level, _heading, blocks in page.sections for block in blocks for s in sentences(block)]
        noise = [s for chrome in page.boilerplate for s in sentences(chrome)]
        kept_main += sum(_squash(s) in text for s in main)
        total_main += len(main)
        kept_noise += sum(_squash(s) in text for s in noise)
        total_noise += len(noise)
        wanted = [heading for _level, heading, _blocks in page.sections]
        kept_heads += sum(heading in result.headings for heading in wanted)
        total_heads += len(wanted)
    return {
        "recall": kept_main / total_main,
        "noise": kept_noise / total_noise,
        "headings": kept_heads / total_heads,
        "ms_per_page": statistics.mean(millis),
    }


def main() -> None:
    print(
        f"{len(PAGES)} help-centre pages (EN and ZH), h2/h3 headings, list, table, chrome around the article"
    )
    print(f"{'library':<18} {'recall':>7} {'noise':>7} {'headings':>9} {'ms/page':>8}")
    for name, run in LIBRARIES.items():
        run(page_html(PAGES[0]))  # warm-up: imports and caches are not part of a page's cost
        figures = measure(run)
        print(
            f"{name:<18} {figures['recall']:>7.0%} {figures['noise']:>7.0%} {figures['headings']:>9.0%}"
            f" {figures['ms_per_page']:>8.1f}"
        )


if __name__ == "__main__":
    main()
