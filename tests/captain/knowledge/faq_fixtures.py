"""20 EN+ZH FAQ entries with a paraphrased customer query each, plus unrelated queries.

Shared by the embedding tests (and handy for benchmarking thresholds): the queries avoid
copying the FAQ wording so the encoder has to match meaning, not just words.
"""

# (FAQ question, FAQ answer, a customer's paraphrased query for this entry)
FAQ: list[tuple[str, str, str]] = [
    (
        "How do I reset my password?",
        "Open Settings > Security and choose 'Reset password'; we email you a link valid for 30 minutes.",
        "I forgot my login password, how can I change it?",
    ),
    (
        "How long does shipping take?",
        "Standard delivery takes 3-5 business days; express delivery arrives the next business day.",
        "When will my parcel be delivered?",
    ),
    (
        "Can I return an item?",
        "You can return unused items within 30 days of delivery for a full refund.",
        "I want to send back a jacket I bought last week.",
    ),
    (
        "Which payment methods do you accept?",
        "We accept Visa, Mastercard, PayPal and Apple Pay.",
        "Can I pay with a credit card or PayPal?",
    ),
    (
        "How do I cancel my subscription?",
        "Go to Account > Billing and click 'Cancel plan'. You keep access until the period ends.",
        "I'd like to stop my monthly plan.",
    ),
    (
        "Do you ship internationally?",
        "Yes, we ship to over 40 countries; customs fees are paid by the recipient.",
        "Can you deliver to Canada?",
    ),
    (
        "How can I track my order?",
        "Use the tracking link in your shipping confirmation email or open Orders in your account.",
        "Where is my package right now?",
    ),
    (
        "How do I change my email address?",
        "Open Profile, edit the email field and confirm the change from the new address.",
        "I need to update the e-mail on my account.",
    ),
    (
        "What are your customer service hours?",
        "Our support team is available Monday to Friday, 9am to 6pm CET.",
        "When can I reach a support agent?",
    ),
    (
        "Why was I charged twice?",
        "A duplicate charge is usually a pending authorisation that disappears within 3 days.",
        "There are two identical payments on my bank statement.",
    ),
    ("如何修改收货地址？", "在“我的订单”中点击“修改地址”，订单发货前都可以修改。", "我想换一个送货地址"),
    ("退款需要多长时间？", "退款审核通过后，款项将在3到7个工作日内退回原支付账户。", "钱什么时候能退回来？"),
    ("如何开具发票？", "在订单详情页点击“申请发票”，填写抬头和税号即可。", "我需要公司报销用的发票"),
    ("忘记密码怎么办？", "在登录页点击“忘记密码”，通过手机验证码重置密码。", "我登录不了，密码想不起来了"),
    ("支持哪些支付方式？", "支持支付宝、微信支付和银联卡。", "可以用微信付款吗？"),
    ("订单可以取消吗？", "订单未发货前可在订单详情页直接取消，已发货订单请申请退货。", "我刚下的单不想要了"),
    ("商品有质量问题怎么办？", "请在收货后7天内拍照联系客服，我们将免费为您换货或退款。", "收到的杯子有裂缝"),
    ("如何联系人工客服？", "在App内点击“客服”，输入“人工”即可转接人工客服。", "我想和真人客服说话"),
    ("会员有哪些权益？", "会员享受免运费、专属折扣和生日礼包。", "开通会员有什么好处？"),
    ("配送范围包括哪些地区？", "我们配送全国所有省份，偏远地区可能需要额外运费。", "你们能送到新疆吗？"),
]

# Queries that match no FAQ entry: they must score below the threshold against every entry.
UNRELATED: list[str] = [
    "What is the capital of Australia?",
    "Write me a poem about the ocean.",
    "Explain quantum entanglement in simple words.",
    "今天天气怎么样？",
    "推荐一部好看的科幻电影",
    "How many legs does a spider have?",
]


def documents(mode: str = "qa") -> list[str]:
    """FAQ texts as indexed by faq_lookup: "q" = question only, "qa" = question + answer."""
    return [q if mode == "q" else f"{q}\n{a}" for q, a, _ in FAQ]
