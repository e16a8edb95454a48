"""Hand-written material for the routing TEST dataset (routing_test.jsonl, see routing_generate.py).

A third, untouched evaluation set: three support domains (car and home insurance, food delivery, a hotel chain)
that neither routing_conversations.jsonl nor routing_heldout.jsonl has, and their own pools of greetings,
thanks, requests for a human and canned replies. No customer sentence here appears in routing_domains.py.
The test set uses every pool whole (it is not split with another file). Builder example phrases (`examples`)
are what a builder would type in the admin; no customer sentence repeats one. Do not tune on this file.
"""

# fmt: off
INSURANCE = {
    "id": "insurance",
    "assistant": {"name": "Harbor Mutual assistant", "description": "Customer service assistant of Harbor Mutual, a car and home insurance company."},
    "general": {
        "en": ["Good evening, who am I chatting with?", "Is there a Harbor Mutual office in Cologne?", "What kinds of insurance do you offer?", "Is there an app for Harbor Mutual?", "Are you available on public holidays?", "How long has Harbor Mutual been around?", "Am I chatting with an automated assistant?", "What's your postal address for letters?"],
        "zh": ["晚上好，请问你是哪位？", "科隆有你们的办事处吗？", "你们都卖哪些保险？", "Harbor Mutual有手机应用吗？", "法定节假日你们上班吗？", "你们公司成立多久了？", "我现在是在跟自动回复聊天吗？", "寄信的话该寄到哪个地址？"],
    },
    "scenarios": [
        {"key": "claims", "title": "Claims", "description": "The customer reports damage, an accident, a theft or a loss and wants to file an insurance claim or follow one up.",
         "instruction": "Open and follow up on claims.",
         "examples": ["file a claim", "report accident damage", "我要报案理赔", "理赔进度"],
         "requests": {
             "en": ["Someone reversed into my car in the supermarket car park", "A pipe burst upstairs and our ceiling is soaked", "I'd like to report a break-in at my flat", "What's happening with the claim I opened two weeks ago?", "Hail dented the roof of my car yesterday, is that covered?", "My bike was stolen from the garden shed", "The storm took half the tiles off our roof", "The assessor still hasn't called me back about the water damage", "I had a small collision on the motorway, nobody was hurt, what do I do now?", "Why was my claim for the cracked windscreen rejected?"],
             "zh": ["在超市停车场被人倒车撞了", "楼上水管爆了，我家天花板全湿了", "我家被盗了，想报个案", "两周前报的理赔现在怎么样了？", "昨天下冰雹把车顶砸出坑了，这个保吗？", "放在花园棚子里的自行车被偷了", "暴风雨把我家屋顶的瓦掀掉了一半", "定损员到现在还没给我回电话", "在高速上轻微追尾了，没人受伤，接下来该怎么办？", "挡风玻璃裂了的理赔为什么被拒了？"]},
         "followups": {
             "en": ["The claim number is HM-20931.", "It happened on Saturday around 6 pm.", "I've got photos of the damage.", "The other driver gave me his insurance details.", "The police reference is 4471/24.", "Will I lose my no-claims bonus?", "How much is the excess on this?", "Okay, I'll upload the repair quote tonight."],
             "zh": ["理赔编号是HM-20931。", "周六傍晚6点左右发生的。", "损坏的地方我都拍了照片。", "对方司机把他的保险信息给我了。", "报警回执号是4471。", "这样会影响我的无赔款优惠吗？", "这次免赔额是多少？", "好的，我今晚把维修报价单传上去。"]}},
        {"key": "policy_changes", "title": "Policy changes", "description": "Changes to an existing car or home policy: adding a driver or a vehicle, a new address, the level of cover, renewal or cancellation.",
         "instruction": "Handle changes to existing policies.",
         "examples": ["add a driver to my policy", "change my coverage", "修改保单", "加一个驾驶人"],
         "requests": {
             "en": ["My son just passed his driving test and will use my car", "We're moving to a new flat next month, what do I need to do?", "I want to increase the contents cover on my home insurance", "I sold my old car and bought a new one", "Can I cancel my home insurance before it renews?", "Please update the registration number on my car policy", "Can I add legal protection to my policy?", "My policy renews in June, can I lower the premium by raising the excess?", "I got married and changed my surname", "I'm going to commute by car instead of the train from now on, does that change anything?"],
             "zh": ["我儿子刚考出驾照，以后也要开我的车", "我们下个月搬家，保险这边要做什么？", "我想提高家财险的室内财产保额", "旧车卖了，新买了一辆", "家财险到期前可以退保吗？", "请帮我更新车险上的车牌号", "能在保单上加一个法律援助险吗？", "保单六月续保，提高免赔额能不能降保费？", "我结婚后改了姓", "以后我要开车上班，不坐火车了，这有影响吗？"]},
         "followups": {
             "en": ["The policy number is CP-55810.", "The new address is Lindenstrasse 12.", "He's 18 and lives with us.", "From the first of next month.", "What would the new premium be?", "The car is a 2021 Skoda Octavia.", "Do you need a copy of the registration papers?", "Fine, go ahead with the change."],
             "zh": ["保单号是CP-55810。", "新地址是林登街12号。", "他18岁，跟我们住在一起。", "从下个月1号开始。", "改完保费是多少？", "车是2021年的斯柯达明锐。", "需要行驶证的复印件吗？", "行，就这么改吧。"]}},
        {"key": "roadside_assistance", "title": "Roadside assistance", "description": "The customer's vehicle has broken down or is stuck on the road and needs towing, a jump start, a tyre change or other help on the spot.",
         "instruction": "Organise help on the road.",
         "examples": ["my car broke down", "I need a tow truck", "车抛锚了", "需要拖车"],
         "requests": {
             "en": ["My car won't start and I'm in a car park in the city centre", "I've got a flat tyre on the A9 and no spare", "The engine warning light came on and the car just stopped", "I locked my keys inside the car", "I put petrol in my diesel car at the station", "Smoke is coming out from under the bonnet, I'm on the hard shoulder", "The battery is dead again, can someone come with a jump starter?", "How long until the tow truck gets here? I've been waiting an hour", "I'm stuck near Verona with a broken clutch, can you help abroad?", "My car slid into a ditch in the snow and I can't get it out"],
             "zh": ["车打不着火了，我在市中心的停车场", "在A9高速上爆胎了，没有备胎", "发动机故障灯亮了，车直接熄火了", "钥匙锁在车里了", "我在加油站把汽油加进柴油车里了", "引擎盖下面在冒烟，我停在应急车道上", "电瓶又没电了，能派人来帮忙搭电吗？", "拖车还要多久到？我已经等了一个小时", "我在维罗纳附近离合器坏了，国外也能救援吗？", "下雪车滑到沟里了，开不出来"]},
         "followups": {
             "en": ["I'm at the Shell station on Hauptstrasse.", "It's a grey VW Golf, plate HH-KL 204.", "There are two kids in the car with me.", "My phone battery is at 15 percent.", "Can the tow truck take it to my own garage?", "I've put the warning triangle out.", "How much will the towing cost me?", "Okay, I'll wait by the car."],
             "zh": ["我在主街的壳牌加油站。", "灰色大众高尔夫，车牌HH-KL 204。", "车上还有两个孩子。", "我手机只剩15%的电了。", "拖车能拖到我常去的修理厂吗？", "三角警示牌已经放好了。", "拖车费要我自己出吗？", "好的，我在车旁边等。"]}},
    ],
}

FOOD = {
    "id": "food",
    "assistant": {"name": "Munchr support", "description": "Support assistant of Munchr, an app that delivers restaurant food and groceries."},
    "general": {
        "en": ["Hey, is this Munchr support?", "Which cities does Munchr deliver in?", "Can restaurants sign up with you?", "Do you also deliver groceries?", "Is support still online late at night?", "Where is Munchr based?", "How do I become a Munchr courier?", "Is there a website as well as the app?"],
        "zh": ["嘿，这里是Munchr客服吗？", "Munchr在哪些城市能送？", "餐厅可以入驻你们平台吗？", "你们也送超市的东西吗？", "深夜客服还在线吗？", "Munchr总部在哪？", "怎么成为Munchr的骑手？", "除了App，Munchr有网页版吗？"],
    },
    "scenarios": [
        {"key": "missing_items", "title": "Missing or wrong items", "description": "Something from the order is missing, wrong, spilled or damaged when the delivery arrives.",
         "instruction": "Sort out missing or wrong items.",
         "examples": ["an item is missing from my order", "I got the wrong food", "少送了东西", "送错餐了"],
         "requests": {
             "en": ["My order came without the fries", "I ordered a vegan burger and got one with beef", "The soup leaked all over the bag", "Only two of the three pizzas arrived", "There's no drink in the bag even though I paid for it", "This isn't my order at all, it's someone else's sushi", "The cake was completely squashed when it got here", "Half of my grocery order wasn't in the bags", "The sauce I paid extra for wasn't included", "The eggs in my grocery delivery were all cracked"],
             "zh": ["送来的餐里没有薯条", "我点的是素汉堡，结果送来的是牛肉的", "汤洒得整个袋子都是", "点了三个披萨只到了两个", "付了饮料的钱，袋子里却没有", "这根本不是我的单，是别人的寿司", "蛋糕送到的时候已经压扁了", "买的超市商品少了一半", "加钱点的酱没给我", "买的鸡蛋全碎了"]},
         "followups": {
             "en": ["The order number is MU-38812.", "It was from Golden Dragon on Elm Street.", "I can send a photo of the receipt.", "The missing one was the large pepperoni.", "Can I get the money back on my card instead of app credit?", "Just the drinks, everything else was there.", "I already threw the packaging away.", "Alright, credit is fine too."],
             "zh": ["订单号MU-38812。", "是榆树街的金龙餐馆。", "我可以发小票照片给你。", "少的是那个大份意式辣香肠披萨。", "能退回到银行卡而不是余额吗？", "就少了饮料，别的都在。", "包装我已经扔掉了。", "好吧，退到余额也行。"]}},
        {"key": "late_order", "title": "Late or undelivered orders", "description": "The order is late, the courier seems lost or stuck, or the order has not arrived at all.",
         "instruction": "Track late orders.",
         "examples": ["where is my order", "my food is late", "外卖怎么还没到", "骑手在哪"],
         "requests": {
             "en": ["It's been over an hour and still no food", "The app says the courier is here but nobody rang the bell", "The courier has been going in circles on the map for twenty minutes", "My order was marked delivered but I never got it", "The estimated time keeps getting pushed back", "Can you check what's going on with our dinner? We're starving", "The driver called and said he can't find the building", "The restaurant hasn't even started preparing my order after 40 minutes", "Is my food still coming or should I cook something?", "The tracking stopped updating after pickup"],
             "zh": ["都一个多小时了，饭还没来", "App显示骑手到了，可是没人按门铃", "骑手在地图上绕了二十分钟了", "订单显示已送达，但我根本没收到", "预计送达时间一直往后推", "能帮我看看晚饭怎么回事吗？我们都饿坏了", "骑手打电话说找不到我们楼", "四十分钟了餐厅还没开始做", "我的饭到底还来不来，要不要自己做饭了？", "取餐之后配送进度就不更新了"]},
         "followups": {
             "en": ["I'm in building C, third floor.", "The order was placed at 7:15.", "My phone number in the app is correct.", "Can you call the courier for me?", "If it's not here in 15 minutes I want to cancel.", "There's a code on the gate: 2580.", "It's order MU-40127.", "Okay, I can see him on the map now."],
             "zh": ["我在C栋三楼。", "是7点15下的单。", "App里的手机号是对的。", "你能帮我打给骑手吗？", "15分钟内还不到我就取消。", "大门密码是2580。", "订单号MU-40127。", "好的，现在地图上能看到他了。"]}},
        {"key": "promo_codes", "title": "Promo codes and vouchers", "description": "Discount codes, vouchers, gift cards, referral credit or free-delivery offers that do not work or that the customer asks about.",
         "instruction": "Help with promo codes and vouchers.",
         "examples": ["my promo code doesn't work", "how do I use a voucher", "优惠码用不了", "红包怎么用"],
         "requests": {
             "en": ["The code WELCOME10 says it's invalid", "My friend signed up with my link but I didn't get the credit", "The free delivery offer wasn't applied to my order", "Where do I enter a gift card in the app?", "I was charged full price even though the discount showed at checkout", "Can I use two discount codes on one order?", "The voucher I got after my complaint last week has disappeared", "Is there anything off for a first order?", "The app told me I get 5 euros off my next order, where is it?", "My birthday voucher expired before I could use it"],
             "zh": ["优惠码WELCOME10提示无效", "朋友用我的链接注册了，我却没拿到奖励", "免配送费的活动没有用到我的订单上", "礼品卡在App里哪里输入？", "结账时显示了折扣，扣款却是原价", "一个订单能用两个优惠码吗？", "上周投诉补偿的券不见了", "新用户第一单有优惠吗？", "App说下一单减5欧，在哪里领？", "生日券还没用就过期了"]},
         "followups": {
             "en": ["I typed it in capital letters.", "The order total was 23 euros.", "The minimum was 15 and I was above it.", "My friend's email is li.wei@example.com.", "It was in Monday's newsletter.", "Can you add the credit manually?", "It says 'not valid for this restaurant'.", "Nice, I can see the discount now."],
             "zh": ["我是用大写字母输入的。", "订单总价23欧。", "最低消费15欧，我超过了。", "朋友的邮箱是li.wei@example.com。", "是周一推送邮件里的。", "能手动帮我把奖励加上吗？", "提示“该餐厅不可用”。", "好的，现在能看到折扣了。"]}},
    ],
}

HOTEL = {
    "id": "hotel",
    "assistant": {"name": "Larkspur Hotels concierge", "description": "Guest support assistant of Larkspur Hotels, a chain of city hotels."},
    "general": {
        "en": ["How many Larkspur hotels are there?", "Are pets allowed in your hotels?", "Do you have a customer service phone line?", "Is this assistant available around the clock?", "Who owns Larkspur Hotels?", "Do your hotels have parking?", "Am I talking to the front desk?", "Where can I read your privacy policy?"],
        "zh": ["你们一共有多少家酒店？", "你们酒店可以带宠物吗？", "有客服热线吗？", "这个助手是24小时在线的吗？", "Larkspur酒店是哪个集团的？", "你们酒店有停车场吗？", "我是在跟前台说话吗？", "隐私政策在哪里看？"],
    },
    "scenarios": [
        {"key": "reservations", "title": "Reservations", "description": "Booking a room, changing the dates, guests or room type of a reservation, or cancelling it.",
         "instruction": "Handle reservations.",
         "examples": ["book a room", "change my reservation dates", "订房", "取消预订"],
         "requests": {
             "en": ["I need a double room in Vienna from the 12th to the 14th", "Can I push my stay back by one night?", "We won't make it to Lisbon after all, please cancel the booking", "Is it possible to upgrade my reservation to a suite?", "I booked a single but my partner is coming too", "Do you have any rooms free tonight in Prague?", "Our flight lands a day earlier, can we check in on Thursday instead?", "Is my reservation free to cancel?", "I'd like to add breakfast to my booking", "I never got a confirmation email for my booking"],
             "zh": ["我要订维也纳12号到14号的双人间", "我的入住能往后推一晚吗？", "我们去不了里斯本了，请取消预订", "能把我的预订升级成套房吗？", "我订的是单人间，但我对象也要一起来", "今晚布拉格还有空房吗？", "我们航班提前一天落地，能改成周四入住吗？", "我的预订可以免费取消吗？", "我想在预订里加上早餐", "订完房一直没收到确认邮件"]},
         "followups": {
             "en": ["The confirmation number is LK-772019.", "Two adults and one child.", "A non-smoking room if possible.", "Is the price per night or in total?", "We'll arrive late, around 11 pm.", "The reservation is under the name Moreau.", "What's the price difference?", "Great, please book it."],
             "zh": ["确认号是LK-772019。", "两个大人一个小孩。", "尽量要无烟房。", "价格是每晚的还是总价？", "我们会晚到，大概晚上11点。", "预订人姓莫罗。", "差价是多少？", "好的，请帮我订。"]}},
        {"key": "room_issues", "title": "Problems during the stay", "description": "A guest staying at the hotel reports a problem with the room or asks for housekeeping, maintenance or extra amenities.",
         "instruction": "Handle in-stay requests.",
         "examples": ["the air conditioning in my room is broken", "I need more towels", "房间空调坏了", "需要打扫房间"],
         "requests": {
             "en": ["There's no hot water in room 412", "The people next door have been shouting all night", "Could someone bring up an extra pillow?", "The heating in our room won't turn off", "My key card stopped working", "The bathroom sink is blocked", "Nobody cleaned our room today", "It smells of smoke in here and we booked non-smoking", "Can we get a baby cot in the room?", "Neither the TV nor the Wi-Fi works in my room"],
             "zh": ["412房间没有热水", "隔壁吵了一整晚", "能再送一个枕头上来吗？", "房间的暖气关不掉", "房卡刷不开门了", "卫生间洗手池堵了", "今天房间没人打扫", "房间里一股烟味，我们订的是无烟房", "房间里能加一张婴儿床吗？", "房间的电视和无线网都用不了"]},
         "followups": {
             "en": ["I'm in room 412.", "It's been like this since we checked in.", "Please send someone before 10.", "We're out until the evening, you can go in.", "I already tried resetting it.", "Could we move to another room instead?", "Is there a fee for that?", "Thanks, the technician just arrived."],
             "zh": ["我在412房间。", "入住以来一直这样。", "请10点之前派人来。", "我们晚上才回来，你们可以进房间。", "我已经试过重置了。", "能不能给我们换个房间？", "这个要额外收费吗？", "谢谢，维修师傅刚到。"]}},
        {"key": "loyalty_program", "title": "Loyalty programme", "description": "Larkspur Rewards membership: points balance, points missing after a stay, member tiers and redeeming points.",
         "instruction": "Handle loyalty programme questions.",
         "examples": ["my points are missing", "how do I redeem points", "积分没到账", "会员等级"],
         "requests": {
             "en": ["My last stay in Berlin never showed up in my points", "How many points do I need for a free night?", "What do I get when I reach Gold status?", "Can I transfer points to my husband's account?", "My points are about to expire, how can I keep them?", "I forgot to give my member number at check-in", "How do I join Larkspur Rewards?", "I was downgraded to Silver even though I stayed 20 nights", "Can I use points to pay for a room upgrade?", "Can I turn my airline miles into hotel points?"],
             "zh": ["上次在柏林住的积分一直没到账", "兑换一晚免费住宿要多少积分？", "升到金卡有什么好处？", "积分能转给我老公吗？", "积分快过期了，怎么保住？", "办入住的时候忘了报会员号", "怎么加入Larkspur会员？", "我住了20晚，怎么还被降成银卡了？", "升级房型能用积分付吗？", "航空里程能换成酒店积分吗？"]},
         "followups": {
             "en": ["My member number is 6603 2291.", "The stay was from 3 to 6 May.", "I paid through a travel agency.", "How long until they show up?", "I have about 18,000 points now.", "Can I see the history in the app?", "What about nights booked through partner sites?", "Good to know, thank you."],
             "zh": ["我的会员号是6603 2291。", "是5月3号到6号住的。", "我是通过旅行社付的款。", "多久能到账？", "我现在大概有一万八千分。", "在App里能看到记录吗？", "通过合作网站订的也算吗？", "知道了，谢谢。"]}},
    ],
}

HUMAN_REQUESTS_TEST = {
    "en": ["Could you pass me on to one of your colleagues?", "I need to speak to a real agent about this", "Is there a human I can talk to?", "This isn't working, put me through to a person", "Please get a member of staff on the line", "Let me talk to a supervisor", "Can a human take over this chat?", "I'd prefer to explain this to a real person"],
    "zh": ["能帮我转给你们的同事吗？", "这个事我要跟真人说", "有没有人工可以聊？", "说不清楚，给我转人工吧", "麻烦找个工作人员来", "让你们主管跟我说", "能让真人接手这个对话吗？", "我还是想跟真人解释"],
}

THANKS_TEST = {
    "en": ["Cheers.", "Okay, thanks a lot.", "Much appreciated", "Nice, thanks", "Understood.", "Alright then", "Thank you very much!", "Cool"],
    "zh": ["多谢了", "好的，非常感谢。", "收到", "行，谢谢", "了解了。", "那好吧", "太感谢了！", "嗯嗯"],
}

GREETINGS_TEST = {
    "en": ["Morning, hello", "Hey there", "Hi, hope you're well", "Evening!", "Hello, I have a question", "Hi, is anybody around?", "Hiya", "Greetings"],
    "zh": ["早啊", "您好", "哈喽", "晚上好", "你好，想咨询一下", "请问有人在线吗？", "嗨，打扰一下", "喂，你好"],
}

REPLIES_TEST = {
    "triage": {"en": "Hello! What can I do for you?", "zh": "您好！有什么能帮到您的吗？"},
    "specialist": {"en": "Happy to help with this ({title}). Can you share some details?", "zh": "好的，这件事由我来帮您处理（{title}）。请告诉我具体情况。"},
    "followup": {"en": "Got it, thank you. Is there anything else on this?", "zh": "收到，谢谢。关于这件事还有别的需要吗？"},
}
# fmt: on

DOMAINS_TEST = [INSURANCE, FOOD, HOTEL]
