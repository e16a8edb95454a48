"""The help desks of the real-language routing sets (build.py), written by hand.

Each desk is an assistant (triage: greetings, general questions about the business) and the scenarios a
support-team admin would set up for it. They were written from the source's intent, service or domain NAMES
only (CLINC150 `domains.json`, the SGD `schema.json` service and intent names, the CrossWOZ act vocabulary),
before any customer message of the sources was read, and they carry no example phrases.

`covers` says which source labels (CLINC intents, SGD services, CrossWOZ domains) a scenario takes; it is used
by build.py to label the turns and is not written to the data sets. Labels no scenario covers belong to triage.
A few scenarios cover nothing in the source on purpose (e.g. invoices at a hotel group): real desks have teams
the customers of a given conversation never need, and they are extra candidates for the router.
"""

from __future__ import annotations

from typing import TypedDict


class Scenario(TypedDict):
    key: str
    title: str
    description: str
    instruction: str
    covers: list[str]


class Desk(TypedDict):
    id: str
    name: str
    description: str
    scenarios: list[Scenario]


def _s(key: str, title: str, description: str, instruction: str, covers: list[str]) -> Scenario:
    return Scenario(key=key, title=title, description=description, instruction=instruction, covers=covers)


# fmt: off

# --- CLINC150: dev desks (banking, kitchen_and_dining, work); held-out desks (credit_cards, travel,
# auto_and_commute, home). Uncovered on purpose: interest_rate, food_last, next_holiday, credit_score,
# improve_credit_score, plug_type, timezone, exchange_rate, translate, travel_notification, uber.

CLINC_DEV: list[Desk] = [
    Desk(id="bank", name="Harbour Bank assistant", description=(
        "Customer support assistant of Harbour Bank, a retail bank. Greets customers, answers general "
        "questions about the bank and its products, and passes customers to the right team."), scenarios=[
        _s("account_security", "Blocked accounts, PIN and fraud",
           "When to hand over: the customer's account is blocked or they want it frozen, they want to change "
           "their PIN, or they report fraud or a payment they did not make.",
           "Verify the customer, secure the account and open a fraud case if needed.",
           ["freeze_account", "account_blocked", "pin_change", "report_fraud"]),
        _s("bills", "Paying bills",
           "When to hand over: the customer wants to pay a bill, or asks when a bill is due, how much they "
           "owe or what the minimum payment is.",
           "Look up the bill, tell the customer the amount and due date, and take the payment.",
           ["pay_bill", "bill_due", "bill_balance", "min_payment"]),
        _s("transfers", "Transfers and routing numbers",
           "When to hand over: the customer wants to move money between accounts or send it to someone, or "
           "needs the bank's routing number.",
           "Set up the transfer after confirming the accounts and the amount.",
           ["transfer", "routing"]),
        _s("balance_activity", "Balance and account activity",
           "When to hand over: the customer asks for their balance, their recent transactions or how much "
           "they have spent.",
           "Read out the balance or the transactions the customer asks about.",
           ["balance", "transactions", "spending_history"]),
        _s("cheques", "Cheque books",
           "When to hand over: the customer wants to order new cheques or a cheque book.",
           "Confirm the delivery address and order the cheque book.",
           ["order_checks"]),
    ]),
    Desk(id="dining", name="Tablefolk assistant", description=(
        "Support assistant of Tablefolk, an app for booking restaurants and cooking at home. Greets users, "
        "answers general questions about the app, and passes them to the right team."), scenarios=[
        _s("reservations", "Table reservations",
           "When to hand over: the user wants to book, confirm or cancel a table, or asks whether a restaurant "
           "takes reservations.",
           "Make, check or cancel the booking in the app.",
           ["restaurant_reservation", "confirm_reservation", "cancel_reservation", "accept_reservations"]),
        _s("restaurant_info", "Restaurant reviews and busy times",
           "When to hand over: the user asks what people say about a restaurant or how busy it is.",
           "Share the reviews and the usual busy times of the restaurant.",
           ["restaurant_reviews", "how_busy"]),
        _s("suggestions", "What and where to eat",
           "When to hand over: the user wants a suggestion for a restaurant or for a meal.",
           "Ask about taste, budget and place, then suggest two or three options.",
           ["restaurant_suggestion", "meal_suggestion"]),
        _s("recipes", "Recipes and cooking help",
           "When to hand over: the user wants a recipe, asks how long to cook something, or needs a "
           "substitute for an ingredient.",
           "Give clear cooking steps from the app's recipe library.",
           ["recipe", "cook_time", "ingredient_substitution"]),
        _s("nutrition", "Nutrition and ingredients",
           "When to hand over: the user asks about calories, nutrition or what ingredients a dish contains.",
           "Give the nutrition facts or the ingredient list of the dish.",
           ["calories", "nutrition_info", "ingredients_list"]),
    ]),
    Desk(id="people", name="Corvid People desk", description=(
        "The HR helpdesk assistant of Corvid Logistics for its employees. Greets staff, answers general "
        "questions about the company, and passes them to the right HR team."), scenarios=[
        _s("time_off", "Time off",
           "When to hand over: the employee wants to request time off, check a request, or asks how many "
           "days they have left or have used.",
           "Check the leave balance and file or look up the request.",
           ["pto_request", "pto_request_status", "pto_balance", "pto_used"]),
        _s("pay", "Pay and direct deposit",
           "When to hand over: the employee asks when payday is, what they earn, or wants to set up or change "
           "direct deposit.",
           "Answer from the payroll record and update bank details if asked.",
           ["payday", "direct_deposit", "income"]),
        _s("tax_forms", "Tax forms",
           "When to hand over: the employee needs their W-2 or has a question about tax.",
           "Send the tax form or explain the withholding.",
           ["w2", "taxes"]),
        _s("benefits", "Insurance and retirement",
           "When to hand over: the employee asks about their health insurance, wants to change it, or wants "
           "to roll over a 401k.",
           "Explain the benefit and start the change or rollover.",
           ["insurance", "insurance_change", "rollover_401k"]),
        _s("meetings", "Meetings",
           "When to hand over: the employee wants to schedule a meeting or asks about their meeting schedule.",
           "Check calendars and book or list the meetings.",
           ["meeting_schedule", "schedule_meeting"]),
    ]),
]

CLINC_HELDOUT: list[Desk] = [
    Desk(id="cards", name="Lumen Card assistant", description=(
        "Customer support assistant of Lumen, a credit card company. Greets cardholders, answers general "
        "questions about Lumen, and passes them to the right team."), scenarios=[
        _s("lost_damaged", "Lost, damaged or expiring cards",
           "When to hand over: the card is lost, stolen, damaged or about to expire, or the customer asks how "
           "long a replacement takes.",
           "Block the card if needed and order a replacement.",
           ["report_lost_card", "damaged_card", "replacement_card_duration", "expiration_date"]),
        _s("declined", "Declined card",
           "When to hand over: the customer's card was declined.",
           "Find out why the payment was declined and fix it if possible.",
           ["card_declined"]),
        _s("limits", "Credit limit",
           "When to hand over: the customer asks what their credit limit is or wants it changed.",
           "Tell the limit and review a request for a change.",
           ["credit_limit", "credit_limit_change"]),
        _s("rewards", "Rewards",
           "When to hand over: the customer asks about their rewards points or wants to redeem them.",
           "Give the points balance and redeem them as the customer chooses.",
           ["rewards_balance", "redeem_rewards"]),
        _s("applications", "New cards and applications",
           "When to hand over: the customer wants to apply for a new card or asks about an application.",
           "Take the application or give its status.",
           ["new_card", "application_status"]),
        _s("rates_fees", "Interest rates and fees",
           "When to hand over: the customer asks about their APR or fees for using the card abroad.",
           "Explain the rate or fee that applies to the customer's card.",
           ["apr", "international_fees"]),
    ]),
    Desk(id="travel", name="Skylark Travel assistant", description=(
        "Customer support assistant of Skylark Travel, an online travel agency. Greets travellers, answers "
        "general questions about Skylark, and passes them to the right team."), scenarios=[
        _s("flights", "Flights",
           "When to hand over: the customer wants to book a flight, check a flight's status or asks what they "
           "can take as carry-on.",
           "Search, book or check the flight and answer baggage allowance questions.",
           ["book_flight", "flight_status", "carry_on"]),
        _s("hotels", "Hotels",
           "When to hand over: the customer wants to book a hotel.",
           "Find and book a hotel that matches the dates and budget.",
           ["book_hotel"]),
        _s("car_hire", "Car hire",
           "When to hand over: the customer wants to rent a car.",
           "Find and reserve a rental car.",
           ["car_rental"]),
        _s("baggage", "Lost luggage",
           "When to hand over: the customer's luggage is lost or delayed.",
           "Open a baggage claim with the airline and share the reference.",
           ["lost_luggage"]),
        _s("entry_health", "Visas, vaccines and travel alerts",
           "When to hand over: the customer asks whether they need a visa or vaccines, or about travel "
           "warnings for a country.",
           "Give the entry and health requirements and current advisories for the destination.",
           ["international_visa", "vaccines", "travel_alert"]),
        _s("trip_ideas", "Trip ideas",
           "When to hand over: the customer wants suggestions on where to go or what to do on a trip.",
           "Suggest destinations or activities that fit the traveller.",
           ["travel_suggestion"]),
    ]),
    Desk(id="car", name="Veloce Drive assistant", description=(
        "Assistant of the Veloce Drive app for owners of Veloce cars. Greets drivers, answers general "
        "questions about Veloce and the app, and passes them to the right team."), scenarios=[
        _s("servicing", "Servicing and oil changes",
           "When to hand over: the driver wants to book a service, asks when the car was last serviced, or "
           "asks when or how to change the oil.",
           "Check the service history and book the next service.",
           ["schedule_maintenance", "last_maintenance", "oil_change_when", "oil_change_how"]),
        _s("tyres", "Tyres",
           "When to hand over: the driver asks about tyre pressure or changing a tyre.",
           "Give the tyre readings or walk the driver through the change.",
           ["tire_pressure", "tire_change"]),
        _s("roadside", "Roadside help",
           "When to hand over: the car won't start and the driver needs a jump start.",
           "Guide the jump start or send roadside assistance.",
           ["jump_start"]),
        _s("fuel", "Fuel and economy",
           "When to hand over: the driver asks about fuel level, which fuel to use or fuel economy.",
           "Answer from the car's data and the owner's manual.",
           ["gas", "gas_type", "mpg"]),
        _s("navigation", "Navigation and traffic",
           "When to hand over: the driver wants directions, a distance, traffic news or their current "
           "location.",
           "Use the car's navigation to answer.",
           ["directions", "distance", "traffic", "current_location"]),
    ]),
    Desk(id="home", name="Nestwise assistant", description=(
        "Support assistant of Nestwise, a smart home speaker and its app. Greets users, answers general "
        "questions about Nestwise, and passes them to the right team."), scenarios=[
        _s("orders", "Shopping orders",
           "When to hand over: the user wants to order something or track an order.",
           "Place the order or give its delivery status.",
           ["order", "order_status"]),
        _s("lists", "Shopping and to-do lists",
           "When to hand over: the user wants to see or change their shopping list or to-do list.",
           "Read out or update the list.",
           ["shopping_list", "shopping_list_update", "todo_list", "todo_list_update"]),
        _s("reminders", "Reminders and calendar",
           "When to hand over: the user wants to set, change or check reminders or calendar events.",
           "Create, change or list the reminders and events.",
           ["reminder", "reminder_update", "calendar", "calendar_update"]),
        _s("music", "Music",
           "When to hand over: the user wants music played, skipped, identified or added to a playlist.",
           "Control playback and playlists on the speaker.",
           ["play_music", "next_song", "what_song", "update_playlist"]),
        _s("smart_home", "Smart home devices",
           "When to hand over: the user wants to control lights, heating or other connected devices.",
           "Control the device or troubleshoot the connection.",
           ["smart_home"]),
    ]),
]

# --- SGD: dev desks from dev-split services; held-out desks from test-split services (Trains_1, Payment_1,
# Messaging_1, Homes_2, Hotels_2, Services_1, Events_3, ... are not in the dev split). Services with no
# scenario (e.g. Weather_1 everywhere) belong to triage.

SGD_DEV: list[Desk] = [
    Desk(id="wayfarer", name="Wayfarer Travel Club assistant", description=(
        "Assistant of Wayfarer, a travel club that books trips for its members. Greets members, answers "
        "general questions about the club, and passes them to the right team."), scenarios=[
        _s("flights", "Flights", "When to hand over: the member wants to find or book a flight.",
           "Search one-way or return flights and book the one the member picks.", ["Flights_3"]),
        _s("hotels", "Hotels", "When to hand over: the member wants to find or reserve a hotel room.",
           "Search hotels for the dates and book the chosen room.", ["Hotels_1", "Hotels_4"]),
        _s("car_hire", "Car hire", "When to hand over: the member wants to rent a car.",
           "Find available cars for the dates and reserve one.", ["RentalCars_1"]),
        _s("coaches", "Coach travel", "When to hand over: the member wants to find or buy a bus or coach "
           "ticket.", "Find buses between the cities and buy the ticket.", ["Buses_1"]),
        _s("sightseeing", "Sightseeing", "When to hand over: the member asks what to see or do at their "
           "destination.", "Suggest attractions that match the member's interests.", ["Travel_1"]),
    ]),
    Desk(id="nightout", name="Nightout assistant", description=(
        "Assistant of Nightout, a city going-out app. Greets users, answers general questions about the app, "
        "and passes them to the right team."), scenarios=[
        _s("restaurants", "Restaurants", "When to hand over: the user wants to find a restaurant or book a "
           "table.", "Find restaurants and reserve a table.", ["Restaurants_2"]),
        _s("events", "Events and tickets", "When to hand over: the user looks for concerts, games or other "
           "events, or wants to buy tickets.", "Find events and buy the tickets.", ["Events_1"]),
        _s("films", "Films", "When to hand over: the user wants to find a film at the cinema or rent one to "
           "watch at home.", "Find films and handle rentals.", ["Movies_2", "Media_2"]),
        _s("music", "Music", "When to hand over: the user wants to find or play a song.",
           "Look up songs and play them on the user's device.", ["Music_1"]),
        _s("rides", "Rides", "When to hand over: the user wants a taxi or a shared ride.",
           "Book the ride and share the driver's details.", ["RideSharing_1"]),
    ]),
]

SGD_HELDOUT: list[Desk] = [
    Desk(id="northline", name="Northline Rail assistant", description=(
        "Assistant of Northline Rail, a train operator that also sells connecting travel. Greets passengers, "
        "answers general questions about Northline, and passes them to the right team."), scenarios=[
        _s("trains", "Train tickets", "When to hand over: the passenger wants to find trains or buy a train "
           "ticket.", "Find trains and sell the ticket.", ["Trains_1"]),
        _s("coaches", "Coach connections", "When to hand over: the passenger wants a bus or coach ticket.",
           "Find buses and buy the ticket.", ["Buses_3"]),
        _s("hotels", "Hotels at your destination", "When to hand over: the passenger wants a hotel room.",
           "Search and book a hotel.", ["Hotels_4"]),
        _s("car_hire", "Car hire", "When to hand over: the passenger wants to rent a car at the station or "
           "elsewhere.", "Find and reserve a rental car.", ["RentalCars_3"]),
        _s("sightseeing", "Things to do", "When to hand over: the passenger asks about attractions or "
           "things to see.", "Suggest attractions at the destination.", ["Travel_1"]),
        _s("refunds", "Refunds and delays", "When to hand over: the passenger wants a refund or compensation "
           "for a cancelled or delayed train.", "Check the journey and process the claim.", []),
    ]),
    Desk(id="evening", name="Evening Club assistant", description=(
        "Assistant of Evening Club, an entertainment membership. Greets members, answers general questions "
        "about the club, and passes them to the right team."), scenarios=[
        _s("events", "Events and tickets", "When to hand over: the member looks for events or wants "
           "tickets.", "Find events and buy tickets.", ["Events_3"]),
        _s("cinema", "Cinema", "When to hand over: the member wants to find films showing, showtimes or "
           "cinema tickets.", "Find showtimes and buy cinema tickets.", ["Movies_1", "Movies_3"]),
        _s("streaming", "Streaming", "When to hand over: the member wants to find or watch a film or show "
           "at home.", "Find titles and start playback.", ["Media_3"]),
        _s("music", "Music", "When to hand over: the member wants to find or play music.",
           "Look up and play music.", ["Music_3"]),
        _s("restaurants", "Restaurants", "When to hand over: the member wants a restaurant or a table.",
           "Find restaurants and book tables.", ["Restaurants_2"]),
        _s("rides", "Rides", "When to hand over: the member needs a taxi or ride.",
           "Book the ride.", ["RideSharing_2"]),
    ]),
    Desk(id="homebase", name="Homebase assistant", description=(
        "Assistant of Homebase, a personal life-admin app. Greets users, answers general questions about "
        "the app, and passes them to the right team."), scenarios=[
        _s("homes", "Homes to buy or rent", "When to hand over: the user looks for a property to buy or rent "
           "or wants to visit one.", "Find properties and schedule a visit.", ["Homes_2"]),
        _s("short_stays", "Short stays", "When to hand over: the user wants to find or book a house for a "
           "short stay.", "Find houses for the dates and book one.", ["Hotels_2"]),
        _s("payments", "Payments", "When to hand over: the user wants to pay someone or request money from "
           "someone.", "Make or request the payment.", ["Payment_1"]),
        _s("appointments", "Hair and therapy appointments", "When to hand over: the user wants to find a "
           "hair stylist or a therapist, or book an appointment.", "Find providers and book the appointment.",
           ["Services_1", "Services_4"]),
        _s("location", "Share my location", "When to hand over: the user wants to send their location to a "
           "contact.", "Share the location with the contact.", ["Messaging_1"]),
        _s("alarms", "Alarms", "When to hand over: the user wants to set or check alarms.",
           "Set or list the alarms.", ["Alarm_1"]),
    ]),
]

# --- CrossWOZ (Beijing, Chinese): five domains, 景点 酒店 餐馆 地铁 出租. The dev desk (a hotel group) covers
# 酒店 餐馆 出租 and leaves 景点 地铁 to triage; the held-out desk (a city tourism app) covers 景点 地铁 餐馆 and
# leaves 酒店 出租 to triage. Three scenarios of each desk cover none of the five domains (see the module
# docstring).

CROSSWOZ_DEV: list[Desk] = [
    Desk(id="yuetu", name="悦途酒店集团客服", description=(
        "悦途酒店集团（北京）的在线客服助手。负责问候客人、回答关于集团的一般问题，并把客人转给对应的团队。"), scenarios=[
        _s("hotel", "酒店查询与预订", "转交时机：客人想找酒店、比较价格星级或设施、或询问某家酒店的地址电话等信息。",
           "按客人的要求查询酒店并协助预订。", ["酒店"]),
        _s("dining", "餐厅推荐", "转交时机：客人想找餐厅吃饭，或询问餐厅的菜品、人均、营业时间、地址等。",
           "根据口味、预算和位置推荐餐厅。", ["餐馆"]),
        _s("car", "用车服务", "转交时机：客人需要叫出租车或安排接送。", "为客人安排车辆并告知车型和车牌。",
           ["出租"]),
        _s("invoice", "发票与账单", "转交时机：客人需要开发票，或对住宿账单有疑问。", "核对账单并开具发票。", []),
        _s("membership", "会员与积分", "转交时机：客人询问会员等级、积分或会员权益。", "查询会员信息并说明权益。",
           []),
        _s("complaints", "投诉与建议", "转交时机：客人对入住或服务不满意，想投诉或提建议。",
           "记录问题、致歉并跟进处理。", []),
    ]),
]

CROSSWOZ_HELDOUT: list[Desk] = [
    Desk(id="jingyou", name="京游出行助手", description=(
        "京游（北京城市旅游App）的客服助手。负责问候用户、回答关于App的一般问题，并把用户转给对应的团队。"), scenarios=[
        _s("sights", "景点与门票", "转交时机：用户想找景点游玩，或询问景点的门票、游玩时间、评分、地址等。",
           "根据用户的兴趣推荐景点并说明门票和开放信息。", ["景点"]),
        _s("metro", "地铁出行", "转交时机：用户想知道坐地铁怎么去某地、附近有哪个地铁站。", "查询地铁线路和站点。",
           ["地铁"]),
        _s("food", "美食推荐", "转交时机：用户想找餐馆，或询问推荐菜、人均消费、营业时间等。",
           "按口味和位置推荐餐馆。", ["餐馆"]),
        _s("orders", "订单与退款", "转交时机：用户想查看、修改或退订在App里下的订单，或申请退款。",
           "查询订单并办理修改或退款。", []),
        _s("account", "账号与登录", "转交时机：用户无法登录、想修改手机号或密码等账号问题。", "核实身份并处理账号问题。",
           []),
        _s("complaints", "投诉与建议", "转交时机：用户对App或服务不满意，想投诉或提建议。", "记录问题并跟进。", []),
    ]),
]
