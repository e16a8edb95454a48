"""Hand-written material for the routing benchmark datasets (see routing_generate.py).

Every pool is split by position: even entries go to the main dataset (routing_conversations.jsonl), odd entries
to the held-back one (routing_heldout.jsonl), so the two share no customer sentence. Builder example phrases
(`examples`) are what a builder would type in the admin; no customer sentence repeats one.
"""

# fmt: off
SHOP = {
    "id": "shop",
    "assistant": {"name": "Acme Shop assistant", "description": "Customer support for Acme Shop, an online store for home electronics."},
    "general": {
        "en": ["What are your opening hours?", "Who am I talking to?", "Do you have a physical store?", "Are you a bot?", "Which countries do you sell in?", "Is there a phone number I can call?"],
        "zh": ["你们的营业时间是几点到几点？", "你是谁？", "你们有实体店吗？", "你是机器人吗？", "你们在哪些国家销售？", "有客服电话吗？"],
    },
    "scenarios": [
        {"key": "refunds", "title": "Refunds", "description": "The customer wants a refund, to return an item, or asks about getting money back.",
         "instruction": "Handle refunds and returns.",
         "examples": ["I want a refund", "how do I return this item", "我要退款", "怎么退货"],
         "requests": {
             "en": ["I'd like my money back for the headphones I bought", "Can I send back the TV? It's not what I expected", "The blender arrived broken, I want a refund", "How do I return a gift I received?", "You charged me but I cancelled, please give me the money back", "I want to return my order, it doesn't fit on my desk", "When will I get the refund for the returned speaker?", "Is it too late to return something I bought five weeks ago?"],
             "zh": ["我买的耳机想退钱", "电视不是我想要的，可以退回去吗？", "搅拌机收到就是坏的，我要退款", "别人送的礼物怎么退？", "订单取消了但钱还没退给我", "这个显示器我不想要了，想退掉", "退回去的音箱什么时候退款？", "买了五周了还能退吗？"]},
         "followups": {
             "en": ["The order number is 58213.", "How long does it take to get the money?", "Do I have to pay for the return label?", "Can the money go back to my credit card?", "It's still in the original box.", "OK, I'll print the label then."],
             "zh": ["订单号是58213。", "钱多久能到账？", "退货运费要我出吗？", "能退回到信用卡吗？", "包装盒还在。", "好的，那我去打印退货单。"]}},
        {"key": "shipping", "title": "Shipping", "description": "Questions about delivery times, shipping costs, tracking an order or a late parcel.",
         "instruction": "Handle delivery and tracking questions.",
         "examples": ["where is my package", "how long does delivery take", "我的快递到哪了", "运费多少"],
         "requests": {
             "en": ["My parcel still hasn't arrived after ten days", "How much is delivery to Austria?", "Can you tell me where my order is right now?", "Do you offer express delivery?", "The tracking link says delivered but I got nothing", "Will my order arrive before Friday?", "Can I change the delivery address of an order on its way?", "Which courier do you use for deliveries?"],
             "zh": ["包裹十天了还没到", "寄到奥地利运费多少？", "帮我查一下订单现在到哪里了", "你们有加急配送吗？", "物流显示已签收但我没收到", "周五之前能送到吗？", "在路上的订单能改收货地址吗？", "你们用哪家快递？"]},
         "followups": {
             "en": ["It's order 77120.", "The address is correct, I checked.", "Can you ask the courier?", "And how long after dispatch?", "I'm not home on weekdays.", "Alright, I'll wait until Monday."],
             "zh": ["订单号77120。", "地址我核对过是对的。", "能帮我问一下快递员吗？", "发货后要几天？", "我工作日不在家。", "好吧，我等到周一。"]}},
        {"key": "payments", "title": "Payments and invoices", "description": "Payment methods, failed or double charges, invoices and receipts.",
         "instruction": "Handle payment and invoice questions.",
         "examples": ["my payment failed", "I need an invoice", "付款失败了", "我要开发票"],
         "requests": {
             "en": ["My card was declined at checkout", "I was charged twice for the same order", "Can I get an invoice with my company name?", "Do you accept PayPal?", "Can I pay in instalments?", "I need a receipt for my last purchase", "Why is there an extra charge on my statement?", "Can I pay by bank transfer?"],
             "zh": ["结账的时候银行卡被拒了", "同一个订单扣了我两次钱", "能开公司抬头的发票吗？", "可以用支付宝付款吗？", "可以分期付款吗？", "我需要上次购物的收据", "账单上怎么多了一笔费用？", "可以银行转账吗？"]},
         "followups": {
             "en": ["It was a Visa card.", "The company is Bright GmbH.", "Both charges are from yesterday.", "Please send it to my email.", "The amount is 89 euros.", "OK, I'll try again."],
             "zh": ["是Visa卡。", "公司名称是明亮有限公司。", "两笔都是昨天扣的。", "请发到我的邮箱。", "金额是89欧元。", "好的，我再试一次。"]}},
        {"key": "account", "title": "Account and login", "description": "Login problems, password reset, changing e-mail or deleting the customer account.",
         "instruction": "Handle account questions.",
         "examples": ["I can't log in", "reset my password", "登录不了", "修改密码"],
         "requests": {
             "en": ["I forgot my password and the reset mail never comes", "How do I change the e-mail on my account?", "Please delete my account and my data", "It says my account is locked", "I can't sign in with Google anymore", "How can I change my username?", "Someone else logged into my account", "The verification code doesn't work"],
             "zh": ["忘记密码了，重置邮件一直收不到", "怎么修改账号绑定的邮箱？", "请注销我的账号并删除数据", "提示我的账号被锁定了", "用谷歌账号登不上了", "用户名怎么改？", "有人登录了我的账号", "验证码不管用"]},
         "followups": {
             "en": ["My email is ana@example.com.", "I already checked the spam folder.", "I tried on my phone too.", "Yes, I still have access to that email.", "It happened this morning.", "Thanks, it works now."],
             "zh": ["我的邮箱是ana@example.com。", "垃圾邮件箱也看过了。", "手机上也试过了。", "是的，那个邮箱我还能用。", "今天早上发生的。", "谢谢，现在可以了。"]}},
    ],
}

TELECOM = {
    "id": "telecom",
    "assistant": {"name": "NetLink support", "description": "Support assistant of NetLink, an internet and mobile provider."},
    "general": {
        "en": ["Hi, what can you do?", "Where is your head office?", "Do you have a shop in Berlin?", "What's your website?", "Are you open on Sundays?", "Who runs NetLink?"],
        "zh": ["你好，你能做什么？", "你们总部在哪里？", "柏林有营业厅吗？", "你们网站是什么？", "周日营业吗？", "NetLink是哪家公司的？"],
    },
    "scenarios": [
        {"key": "outage", "title": "Connection problems", "description": "Internet or mobile connection is down, slow or unstable; router and signal problems.",
         "instruction": "Troubleshoot connection problems.",
         "examples": ["my internet is down", "the wifi is very slow", "网断了", "网速很慢"],
         "requests": {
             "en": ["There's no internet at home since last night", "My connection keeps dropping every few minutes", "The router light is blinking red", "I have no mobile signal in my flat", "Download speed is a tenth of what I pay for", "Is there an outage in Hamburg right now?", "Video calls freeze all the time", "The fibre box shows no light at all"],
             "zh": ["家里从昨晚开始就没网了", "网络每隔几分钟就断一次", "路由器的灯一直闪红灯", "我家里手机没信号", "下载速度只有套餐的十分之一", "汉堡现在是不是断网了？", "视频通话老是卡住", "光猫一个灯都不亮"]},
         "followups": {
             "en": ["I already restarted the router twice.", "It's a FritzBox 7590.", "Yes, all cables are plugged in.", "It's the same on every device.", "Okay, I'll try a factory reset.", "It started around 8 pm."],
             "zh": ["路由器我已经重启两次了。", "型号是FritzBox 7590。", "是的，线都插好了。", "所有设备都一样。", "好的，我试试恢复出厂设置。", "大概晚上8点开始的。"]}},
        {"key": "billing", "title": "Billing", "description": "Monthly bills, unexpected charges, payment of the bill, direct debit.",
         "instruction": "Handle bills.",
         "examples": ["my bill is too high", "question about my invoice", "账单不对", "话费怎么这么多"],
         "requests": {
             "en": ["Why is my bill 30 euros higher this month?", "I want to switch to direct debit", "I was billed for roaming but I didn't travel", "Where can I download my bills?", "My payment bounced, what happens now?", "There's a charge for a service I never ordered", "Can I get my bill on paper again?", "When is the bill due each month?"],
             "zh": ["这个月账单怎么多了30欧？", "我想改成自动扣款", "我没出国却被收了漫游费", "在哪里下载账单？", "扣款失败了，会怎么样？", "有一项我没订的服务被收费了", "能重新寄纸质账单吗？", "每个月账单什么时候到期？"]},
         "followups": {
             "en": ["My customer number is NL-4471.", "The bill is from March.", "The IBAN is the same as before.", "I never used data abroad.", "Fine, please correct it.", "How long until the credit shows up?"],
             "zh": ["我的客户号是NL-4471。", "是三月份的账单。", "银行账户和以前一样。", "我从来没在国外用过流量。", "好，请帮我改正。", "退款多久能到？"]}},
        {"key": "plans", "title": "Plans and contracts", "description": "Changing, upgrading or cancelling a plan or contract, contract duration, new offers.",
         "instruction": "Handle plan changes.",
         "examples": ["upgrade my plan", "cancel my contract", "换套餐", "取消合约"],
         "requests": {
             "en": ["I want a faster internet plan", "How do I cancel my contract?", "When does my contract end?", "Is there a cheaper mobile plan?", "Can I add a second SIM card to my plan?", "I'd like to downgrade to the basic tariff", "What offers do you have for students?", "Can I pause my contract while abroad?"],
             "zh": ["我想换个网速更快的套餐", "怎么取消合约？", "我的合约什么时候到期？", "有便宜点的手机套餐吗？", "能给我的套餐加一张副卡吗？", "我想降到基础套餐", "有学生优惠吗？", "出国期间能暂停合约吗？"]},
         "followups": {
             "en": ["The 250 Mbit one sounds good.", "From next month please.", "Is there a notice period?", "My contract number is C-90112.", "And the price stays the same?", "OK, let's do it."],
             "zh": ["250兆的那个不错。", "从下个月开始。", "有通知期吗？", "合约号是C-90112。", "价格不变吧？", "好的，就这么办。"]}},
    ],
}

BANK = {
    "id": "bank",
    "assistant": {"name": "Nordbank assistant", "description": "Digital assistant of Nordbank for private customers."},
    "general": {
        "en": ["Good morning!", "What can you help me with?", "Where is the nearest branch?", "What are the branch opening times?", "Is this chat secure?", "Hello there"],
        "zh": ["早上好！", "你能帮我什么？", "最近的网点在哪里？", "网点几点开门？", "这个聊天安全吗？", "你好"],
    },
    "scenarios": [
        {"key": "cards", "title": "Cards", "description": "Debit and credit cards: lost or stolen card, blocking, PIN, card limits, a card that does not work.",
         "instruction": "Handle card issues.",
         "examples": ["I lost my card", "block my credit card", "银行卡丢了", "冻结我的信用卡"],
         "requests": {
             "en": ["My wallet was stolen with my debit card in it", "I forgot the PIN of my new card", "My card gets rejected in shops", "Can I raise my credit card limit?", "The new card hasn't arrived yet", "How do I freeze my card temporarily?", "My card expires next month, do I get a new one?", "Contactless payment stopped working"],
             "zh": ["钱包被偷了，借记卡也在里面", "新卡的密码忘了", "我的卡在商店刷不了", "能提高信用卡额度吗？", "新卡还没寄到", "怎么临时冻结银行卡？", "卡下个月到期，会寄新卡吗？", "闪付用不了了"]},
         "followups": {
             "en": ["The last four digits are 4410.", "It happened an hour ago.", "Yes, please block it now.", "I'm at home, same address.", "Do I need to go to the police?", "Thank you, that was quick."],
             "zh": ["卡号后四位是4410。", "一个小时前发生的。", "是的，请现在就冻结。", "我在家，地址没变。", "需要报警吗？", "谢谢，很快。"]}},
        {"key": "loans", "title": "Loans", "description": "Personal loans, mortgages, interest rates, repayments and loan applications.",
         "instruction": "Handle loan questions.",
         "examples": ["I want to apply for a loan", "mortgage interest rate", "我想贷款", "房贷利率"],
         "requests": {
             "en": ["What interest rate do you offer on a car loan?", "Can I repay my loan early without fees?", "I'd like to borrow 15,000 euros", "How long does a mortgage approval take?", "Can I skip one loan instalment?", "What documents do I need for a home loan?", "How much can I borrow with my salary?", "Is a variable rate mortgage a good idea now?"],
             "zh": ["车贷利率是多少？", "可以提前还款不收手续费吗？", "我想借一万五欧元", "房贷审批要多久？", "能跳过一期还款吗？", "办房贷需要什么材料？", "按我的工资能贷多少？", "现在选浮动利率房贷好吗？"]},
         "followups": {
             "en": ["Over five years.", "My net income is 3,200 a month.", "It's for a used car.", "I already have an account with you.", "Can I do it online?", "Alright, send me the form."],
             "zh": ["分五年。", "我月收入税后3200。", "买二手车用的。", "我已经在你们这开户了。", "能在网上办吗？", "好的，把表格发给我。"]}},
        {"key": "transfers", "title": "Transfers", "description": "Bank transfers and payments: sending money, international transfers, standing orders, a missing transfer.",
         "instruction": "Handle transfer questions.",
         "examples": ["send money abroad", "my transfer didn't arrive", "我要转账", "汇款没到账"],
         "requests": {
             "en": ["I sent money to my landlord but it never arrived", "How do I send money to the US?", "Can I cancel a transfer I made this morning?", "How do I set up a standing order?", "What's the fee for an international transfer?", "I typed the wrong IBAN in a payment", "How long does a SEPA transfer take?", "Is there a daily limit for transfers?"],
             "zh": ["给房东转的钱一直没到", "怎么往美国汇款？", "今天早上的转账能撤回吗？", "怎么设置定期转账？", "国际汇款手续费多少？", "我转账时填错了账号", "SEPA转账要多久？", "每天转账有上限吗？"]},
         "followups": {
             "en": ["It was 850 euros.", "The reference was 'rent May'.", "I sent it on Tuesday.", "The receiver's bank is in Spain.", "Can you trace it?", "OK, I'll wait another day."],
             "zh": ["金额是850欧元。", "附言写的是五月房租。", "周二转的。", "收款行在西班牙。", "能帮我查一下吗？", "好的，我再等一天。"]}},
    ],
}

SAAS = {
    "id": "saas",
    "assistant": {"name": "Taskly help", "description": "Help assistant of Taskly, a project management web app."},
    "general": {
        "en": ["hey", "What is Taskly?", "Is there a status page?", "Do you have a blog?", "Which languages does Taskly support?", "Are you a human?"],
        "zh": ["嗨", "Taskly是什么？", "有状态页面吗？", "你们有博客吗？", "Taskly支持哪些语言？", "你是真人吗？"],
    },
    "scenarios": [
        {"key": "bugs", "title": "Bugs and errors", "description": "Something in the app is broken: an error message, a crash, data not saving, a page that does not load.",
         "instruction": "Collect bug details.",
         "examples": ["I get an error", "the app crashed", "报错了", "页面打不开"],
         "requests": {
             "en": ["I get 'Error 500' when I open my board", "Tasks I create disappear after reload", "The desktop app crashes on start", "Attachments fail to upload", "The calendar view is completely blank", "Notifications show up twice", "Drag and drop stopped working in Safari", "Comments are not saving"],
             "zh": ["打开看板就报500错误", "新建的任务刷新后就没了", "桌面版一启动就崩溃", "附件上传失败", "日历视图一片空白", "通知会重复出现两次", "Safari里拖拽不能用了", "评论保存不了"]},
         "followups": {
             "en": ["I'm on Chrome 126.", "It started after the update.", "Here is the board link: taskly.io/b/88.", "Clearing the cache didn't help.", "It happens for my colleagues too.", "OK, I'll wait for the fix."],
             "zh": ["我用的是Chrome 126。", "更新之后开始的。", "看板链接是taskly.io/b/88。", "清缓存也没用。", "同事也遇到了。", "好的，等你们修复。"]}},
        {"key": "subscription", "title": "Subscription", "description": "Plans, seats, upgrades, downgrades, cancelling the subscription and billing of Taskly.",
         "instruction": "Handle subscription questions.",
         "examples": ["upgrade to the pro plan", "cancel my subscription", "升级套餐", "取消订阅"],
         "requests": {
             "en": ["How do I add five more seats?", "I want to cancel our Taskly subscription", "What's the difference between Pro and Business?", "Can we switch to yearly billing?", "We were charged for users who left", "Is there a discount for non-profits?", "How do I downgrade to the free plan?", "Can I change the card we pay with?"],
             "zh": ["怎么再加五个席位？", "我要取消Taskly的订阅", "专业版和商业版有什么区别？", "能改成按年付费吗？", "离职的人还在收费", "非营利组织有折扣吗？", "怎么降级到免费版？", "付款的卡能换吗？"]},
         "followups": {
             "en": ["Our workspace is called Orbit.", "We have 12 users now.", "From the next billing period.", "Will we lose any data?", "Please send the invoice to finance@orbit.io.", "Great, thanks."],
             "zh": ["我们的工作区叫Orbit。", "现在有12个用户。", "从下个计费周期开始。", "数据会丢吗？", "发票请发到finance@orbit.io。", "好的，谢谢。"]}},
        {"key": "how_to", "title": "How-to", "description": "How to use a feature of Taskly: boards, tasks, automations, integrations, permissions.",
         "instruction": "Explain features.",
         "examples": ["how do I create a board", "how to use automations", "怎么用自动化", "如何设置权限"],
         "requests": {
             "en": ["How can I assign a task to two people?", "Is there a way to connect Taskly with Slack?", "How do I make a board private?", "Can I set recurring tasks?", "How do I export a board to CSV?", "Where do I set due date reminders?", "Can guests comment without an account?", "How do I create a task template?"],
             "zh": ["一个任务怎么分配给两个人？", "Taskly能和Slack连起来吗？", "怎么把看板设成私密？", "能设置重复任务吗？", "怎么把看板导出成CSV？", "截止提醒在哪里设置？", "访客没账号能评论吗？", "怎么建任务模板？"]},
         "followups": {
             "en": ["And on mobile?", "Got it, where is that menu?", "Does that work on the free plan?", "Can I do it for all boards at once?", "I don't see that option.", "Perfect, found it."],
             "zh": ["手机上呢？", "明白了，那个菜单在哪？", "免费版能用吗？", "能一次对所有看板设置吗？", "我没看到这个选项。", "好的，找到了。"]}},
    ],
}

TRAVEL = {
    "id": "travel",
    "assistant": {"name": "Skyway assistant", "description": "Assistant of Skyway Air for passengers."},
    "general": {
        "en": ["Hi!", "What can I ask you?", "Where are your offices?", "Is the chat available at night?", "Do you fly to Asia?", "Thanks for being here"],
        "zh": ["嗨！", "我可以问你什么？", "你们办公室在哪？", "晚上能聊天吗？", "你们有飞亚洲的航线吗？", "谢谢你在"],
    },
    "scenarios": [
        {"key": "booking_change", "title": "Change a booking", "description": "Change the date, time or passenger name of a flight booking, or add a seat or a meal.",
         "instruction": "Handle booking changes.",
         "examples": ["change my flight date", "rebook my flight", "改签", "改航班日期"],
         "requests": {
             "en": ["Can I move my flight to next Tuesday?", "My name is misspelled on the ticket", "I want to choose a window seat", "Can I take an earlier flight the same day?", "I need to add a vegetarian meal", "How much does it cost to change the date?"],
             "zh": ["航班能改到下周二吗？", "机票上我的名字拼错了", "我想选个靠窗的座位", "能改到同一天早一点的航班吗？", "我要加一份素食餐", "改日期要多少钱？"]},
         "followups": {
             "en": ["Booking code is QX7P2L.", "Only for me, not my wife.", "The afternoon one is fine.", "Yes, please confirm.", "Is the price difference big?", "OK thanks."],
             "zh": ["订单号QX7P2L。", "只改我的，不改我太太的。", "下午那班可以。", "好的，请确认。", "差价大吗？", "好的谢谢。"]}},
        {"key": "baggage", "title": "Baggage", "description": "Baggage allowance, extra bags, lost, delayed or damaged luggage.",
         "instruction": "Handle baggage.",
         "examples": ["my suitcase is lost", "how many bags can I take", "行李丢了", "行李额度"],
         "requests": {
             "en": ["My suitcase didn't come out at the belt", "How heavy can my carry-on be?", "Can I bring my bike?", "My bag arrived with a broken handle", "I want to add a second checked bag", "Can I take a guitar into the cabin?"],
             "zh": ["行李转盘上没有我的箱子", "随身行李最多多重？", "能带自行车吗？", "我的箱子把手坏了", "我想加一件托运行李", "吉他能带进客舱吗？"]},
         "followups": {
             "en": ["It's a black Samsonite.", "Flight SW 312 from Rome.", "The tag number is SW448812.", "I'm staying at the Hilton.", "How long does it usually take?", "Fine."],
             "zh": ["是个黑色新秀丽箱子。", "从罗马来的SW312航班。", "行李牌号SW448812。", "我住在希尔顿。", "一般要多久？", "行。"]}},
        {"key": "cancellation", "title": "Cancellations and refunds", "description": "Cancel a flight booking, refunds for cancelled flights, compensation for delays.",
         "instruction": "Handle cancellations.",
         "examples": ["cancel my booking", "refund for my cancelled flight", "退票", "航班取消了要赔偿"],
         "requests": {
             "en": ["I can't travel anymore, please cancel my ticket", "Skyway cancelled my flight, I want my money back", "My flight was 5 hours late, do I get compensation?", "Can I get a voucher instead of a refund?", "How long does the refund take after cancelling?", "Is my ticket refundable?"],
             "zh": ["我去不了了，请帮我退票", "航班被取消了，我要退钱", "航班晚了5个小时，有赔偿吗？", "能换成代金券吗？", "退票后多久退款？", "我的票能退吗？"]},
         "followups": {
             "en": ["It's booking ZT55K1.", "The flight was on May 3rd.", "Paid with Mastercard.", "A refund please, not a voucher.", "Do I need to fill in a form?", "Thanks a lot."],
             "zh": ["订单号ZT55K1。", "5月3号的航班。", "用万事达卡付的。", "要退款，不要代金券。", "需要填表吗？", "多谢。"]}},
    ],
}

HUMAN_REQUESTS = {
    "en": ["Can I talk to a real person please?", "I want to speak with a human agent", "Stop, get me someone from your staff", "Please connect me to a human", "I'd rather talk to an actual employee", "Transfer me to a person, not a bot"],
    "zh": ["我要找人工客服", "请帮我转人工", "我不想跟机器人说话，叫个真人来", "给我接一个客服人员", "能让工作人员跟我说吗？", "转真人客服"],
}

THANKS = {
    "en": ["Thanks!", "ok", "Great, thank you.", "Got it.", "Perfect", "Sounds good"],
    "zh": ["谢谢！", "好的", "太好了，谢谢。", "明白了。", "好", "可以"],
}

GREETINGS = {
    "en": ["Hello", "Hi there", "Good afternoon", "Hey, quick question", "Hi!", "Hello, anyone there?"],
    "zh": ["你好", "在吗", "下午好", "你好，问个问题", "嗨！", "有人吗？"],
}

REPLIES = {
    "triage": {"en": "Hi! How can I help you today?", "zh": "您好！请问有什么可以帮您？"},
    "specialist": {"en": "Sure, I can help with that ({title}). Could you give me a few details?", "zh": "好的，这个问题我来处理（{title}）。请提供一些细节。"},
    "followup": {"en": "Thanks, noted. Anything else about this?", "zh": "好的，已记录。这个问题还有别的吗？"},
}

# The "Who is the Undercover" game of seed 000 as a linear flow with rules and after-reply jumps.
GAME = {
    "id": "undercover",
    "assistant": {"name": "谁是卧底主持人", "description": "《谁是卧底》游戏的引导：介绍规则，用户说开始游戏后进入游戏准备。"},
    "scenarios": [
        {"key": "setup", "title": "游戏准备", "description": "进行游戏准备：分配身份和词语。", "instruction": "分配词语。", "examples": []},
        {"key": "human_speaks", "title": "人类玩家发言", "description": "人类玩家进行发言。", "instruction": "引导用户发言。", "examples": []},
        {"key": "ai_speaks", "title": "AI玩家发言", "description": "AI玩家进行发言。", "instruction": "生成AI玩家发言。", "examples": []},
        {"key": "human_votes", "title": "人类玩家投票", "description": "人类玩家进行投票。", "instruction": "引导用户投票。", "examples": []},
        {"key": "ai_votes", "title": "AI玩家投票", "description": "AI玩家进行投票。", "instruction": "生成AI玩家投票。", "examples": []},
        {"key": "result", "title": "报告本轮结果", "description": "报告本轮游戏结果。", "instruction": "报告结果。", "examples": []},
    ],
    "edges": [["triage", "setup"], ["setup", "human_speaks"], ["human_speaks", "ai_speaks"], ["ai_speaks", "human_votes"], ["human_votes", "ai_votes"], ["ai_votes", "result"], ["result", "human_speaks"], ["result", "triage"]],
    "global": ["setup"],
    "nodes": {
        "triage": {"rules": [{"match": "regex", "value": "^(开始|开始游戏|start|start game)$", "to": "setup"}]},
        "setup": {"timing": "after_input", "rules": [{"match": "exact", "value": "继续", "to": "human_speaks"}]},
        "human_speaks": {"rules": [{"match": "exact", "value": "完成", "to": "ai_speaks"}]},
        "ai_speaks": {"mode": "custom", "timing": "after_reply", "rule_prompt": "You MUST select human_votes unconditionally."},
        "human_votes": {"rules": [{"match": "exact", "value": "完成", "to": "ai_votes"}]},
        "ai_votes": {"timing": "after_reply", "rules": [{"match": "regex", "value": ".*", "to": "result"}]},
        "result": {"rules": [{"match": "exact", "value": "继续", "to": "human_speaks"}, {"match": "contains", "value": "结束", "to": "triage"}]},
    },
}
# fmt: on

DOMAINS_MAIN = [SHOP, TELECOM, BANK, SAAS]
DOMAINS_HELD = [SHOP, TELECOM, BANK, SAAS, TRAVEL]
