/**
 * Questions as a caller or a user might ask them, over real documents: this project's README and docs, and the
 * Apache License 2.0 as TypeScript ships it. `answer` is a piece of the passage that answers the question,
 * compared with backticks, asterisks and runs of whitespace removed. Two questions carry a typo on purpose.
 */
export interface SearchQuestion {
  question: string;
  answer: string;
  /** Kept out of every tuning run: the figures on these are the ones that tell. */
  heldOut?: boolean;
  /** Over the documents added last, also counted on their own. */
  newDocument?: boolean;
}

export const SEARCH_QUESTIONS: SearchQuestion[] = [
  { question: 'how long does a login session last before it expires', answer: 'lifetime of a login session token' },
  { question: 'what is the largest file I can upload to a knowledgebase', answer: 'at most 20 MB, in Postgres' },
  {
    question: 'what happens if a website answers 503 or 429 while it is crawled',
    answer: 'retried with exponential backoff, and fails the document after the last attempt',
  },
  { question: 'how are call webhooks signed', answer: 'signed as Standard Webhooks do' },
  { question: 'what happens to API requests when Redis is down', answer: 'The request limiter fails open' },
  { question: 'why do logins fail while redis is unreachable', answer: 'The login throttle fails closed' },
  {
    question: 'how do I retry a create request safely without duplicates',
    answer: 'accepts an Idempotency-Key header',
  },
  { question: 'how many rows does the CSV lead import write per transaction', answer: 'in batches of 1,000 rows' },
  { question: 'what happens to calls that never get a final status', answer: 'are ended failed by the worker' },
  {
    question: 'can I send my token in the query string',
    answer: 'Authorization: Bearer <token> only (never the query string)',
  },
  { question: 'how are api keys stored', answer: 'stored only as SHA-256 hashes' },
  {
    question: 'what happens when the sip provider fails while a trunk is updated',
    answer: 'the trunks this request made are deleted and the row stays as it was',
  },
  { question: 'how are the header values of tools encrypted', answer: 'stored sealed with AES-256-GCM' },
  {
    question: 'how does an operator give a phone number to an account',
    answer: 'Numbers bought from a carrier are given to an account by operations staff',
  },
  {
    question: 'what does deleting an assistant do to its calls',
    answer: 'Deleting an assistant keeps its call history',
  },
  { question: 'how many retries can a campaign make', answer: 'max_retries 1-5, retry_interval 10-4320 minutes' },
  {
    question: 'can a lead phone number be added twice to a campaign',
    answer: 'the same number twice in a campaign is 422',
  },
  {
    question: 'how often are documents stuck in processing enqueued again',
    answer: 're-enqueues documents left processing for 15 minutes',
  },
  {
    question: 'which addresses does the outbound client refuse',
    answer: 'refuses private, loopback, link-local, CGNAT, multicast and metadata addresses',
  },
  { question: 'how do I run postgres and redis on a laptop', answer: 'docker compose up -d' },
  { question: 'may I use the trademarks of the licensor', answer: 'does not grant permission to use the trade names' },
  {
    question: 'when does my patent license end if I start litigation',
    answer: 'shall terminate as of the date such litigation is filed',
  },
  {
    question: 'what must I do with files I modified when I redistribute them',
    answer: 'carry prominent notices stating that You changed the files',
  },
  { question: 'is there any warrenty on the work', answer: 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND' },
  { question: 'is a contributor liable for damages', answer: 'shall any Contributor be liable to You for damages' },
  { question: 'may I charge a fee for support', answer: 'charge a fee for, acceptance of support' },
  {
    question: 'how much ownership means control of a legal entity',
    answer: 'fifty percent (50%) or more of the outstanding shares',
  },
  {
    question: 'do I have to include the NOTICE file when I distribute',
    answer: 'readable copy of the attribution notices contained within such NOTICE file',
  },
  {
    question: 'did the processes recover on their own after the outage',
    answer: 'Both processes recovered on their own',
  },
  { question: 'how much memory does the worker need for a 20 MB PDF', answer: 'Worker peak memory on a 20 MiB PDF' },
  {
    question: 'which hostile values were sent in the malformed input run',
    answer: 'hostile values (NUL, lone surrogates',
  },
  { question: 'how are webhok deliveries retried', answer: 'retried with exponential backoff for about a day' },
];

/**
 * Questions as a caller would speak them, mostly in other words than the answer's, over documents of different
 * kinds (bench/search-corpus and two licences): a shop's FAQ, its returns policy and its price list, a dishwasher's
 * user manual, a residents' handbook read from a generated PDF of many pages, the Apache License 2.0 and the MIT
 * licence. Written before any tuning of the ranking; every third (by position) is held out of every tuning run.
 */
const PARAPHRASED: Omit<SearchQuestion, 'heldOut'>[] = [
  { question: 'are you open on sunday', answer: 'on Sunday from 11:00 to 16:00' },
  { question: 'what time do you close on weekdays', answer: 'Monday to Saturday from 9:00 to 18:00' },
  {
    question: 'can I come in on christmas eve',
    answer: 'except in December, when we trade as on a Sunday',
  },
  { question: 'how quickly will my stuff get here', answer: 'Standard delivery takes two to four working days' },
  { question: 'do you ship to the islands', answer: 'islands are served by a partner courier' },
  {
    question: 'where is my package, it has not moved for a week',
    answer: 'no movement for five working days',
  },
  { question: 'can I pay in installments', answer: 'three monthly instalments without interest' },
  { question: 'do you take cash', answer: 'Cash is accepted in our shops only' },
  {
    question: 'how long is a gift card good for',
    answer: 'stay valid for two years from the date of purchase',
  },
  { question: 'can I get money back for a voucher', answer: 'A voucher cannot be exchanged for cash' },
  { question: 'how do I delete my account', answer: 'close your account at any time from the settings page' },
  {
    question: 'will someone put the wardrobe together for me',
    answer: 'Our fitters assemble furniture in your home',
  },
  { question: 'is the bunk bed safe for my kid', answer: 'Bunk beds are not suitable for children under six' },
  { question: 'can I send something back if I just changed my mind', answer: 'without giving a reason' },
  { question: 'how long do I have to return an item', answer: 'within 30 days of receiving it' },
  {
    question: 'do I get my money back if the box was opened',
    answer: 'We may reduce the refund when an item shows wear',
  },
  { question: 'when will I see the refund on my card', answer: 'within 14 days of receiving the returned goods' },
  { question: 'is the express fee refunded', answer: 'Express delivery surcharges are not refunded' },
  { question: 'my table arrived broken, what do I do', answer: 'Report damage seen on arrival within 48 hours' },
  { question: 'the lamp stopped working after a year', answer: 'develops a defect within two years' },
  { question: 'can I call off my order', answer: 'An order can be cancelled free of charge' },
  { question: 'who pays to send it back', answer: 'the customer pays the return postage' },
  { question: 'can I return curtains made to my size', answer: 'cut to your measurements are made for you alone' },
  {
    question: 'my cat scratched the sofa, is that covered',
    answer: 'does not cover fabric wear, pet damage',
  },
  { question: 'how much is shipping', answer: 'Standard delivery costs 4.95 euros for parcels' },
  { question: 'when is delivery free', answer: 'free on orders above 75 euros' },
  {
    question: 'what does next day delivery cost',
    answer: 'Express next-day delivery costs 12.50 euros',
  },
  { question: 'what is the charge to build the furniture', answer: 'Assembly in your home costs 49 euros per item' },
  { question: 'will you take my old mattress away', answer: 'We take away and recycle your old sofa, mattress or bed' },
  {
    question: 'how expensive is the longer guarantee on a fridge',
    answer: 'cost 10 percent of its price',
  },
  { question: 'is talking to a decorator free', answer: 'free with a purchase above 1,000 euros' },
  {
    question: 'can you hold my order until I move house',
    answer: 'keep an order in our warehouse for up to four weeks',
  },
  {
    question: 'can I use this software for free forever',
    answer: 'perpetual, worldwide, non-exclusive, no-charge, royalty-free',
  },
  { question: 'can they sue me over patents', answer: 'shall terminate as of the date such litigation is filed' },
  {
    question: 'do I have to say that I edited the code',
    answer: 'carry prominent notices stating that You changed the files',
  },
  { question: 'can I use the company logo', answer: 'does not grant permission to use the trade names' },
  { question: 'is the software guaranteed to work', answer: 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND' },
  { question: 'who is responsible if it breaks my computer', answer: 'computer failure or malfunction' },
  { question: 'can I sell support for it', answer: 'charge a fee for, acceptance of support' },
  { question: 'what counts as owning a company', answer: 'fifty percent (50%) or more of the outstanding shares' },
  {
    question: 'if I send a fix upstream, what terms apply',
    answer: 'shall be under the terms and conditions of this License',
  },
  {
    question: 'what does the word you mean in this license',
    answer: 'exercising permissions granted by this License',
  },
  // A dishwasher's user manual (bench/search-corpus/dishwasher-manual.txt).
  { question: 'what water pressure does it need', answer: 'between 0.5 and 10 bar' },
  { question: 'how far can the waste pipe reach', answer: 'extended to at most 4 metres' },
  { question: 'can I plug it into an extension cable', answer: 'do not use an extension lead or a multi-way adapter' },
  { question: 'why are my glasses coming out with white marks', answer: 'Salt softens the water' },
  { question: 'how do I tell it how hard my water is', answer: 'hold the P button while switching on' },
  { question: 'where should I put the mugs', answer: 'Cups, glasses and small bowls go in the upper basket' },
  { question: 'can I wash my fancy painted plates in it', answer: 'hand-painted china are not dishwasher safe' },
  { question: 'which setting saves the most power', answer: 'Eco 50 degrees is the most efficient programme' },
  { question: 'how long does the eco wash take', answer: 'takes 3 hours 45 minutes' },
  {
    question: 'what should I use for really dirty pots',
    answer: 'Intensive 70 degrees is for pans with burnt-on food',
  },
  { question: 'is there a fast wash', answer: 'Quick 35 degrees washes lightly soiled dishes in 30 minutes' },
  { question: 'can I set it to run overnight', answer: 'start the programme 1 to 24 hours later' },
  { question: 'can I use normal washing up liquid', answer: 'never washing-up liquid, which foams and leaks' },
  { question: 'how often do I need to top up the rinse aid', answer: 'about once a month' },
  { question: 'how often should I clean the filter', answer: 'Once a week, turn the filter at the bottom of the tub' },
  { question: 'the dishes still have food on them', answer: 'A blocked filter leaves food on the dishes' },
  { question: 'how do I get rid of the greasy smell inside', answer: 'with a cup of white vinegar once a month' },
  { question: 'how much electricity does it use', answer: 'uses 0.67 kilowatt-hours' },
  { question: 'how many plates can it fit', answer: 'holds 10 place settings' },
  { question: 'how loud is it', answer: 'Its noise level is 44 decibels' },
  { question: 'it is showing E1', answer: 'the machine takes in no water; check that the tap is open' },
  { question: 'there is water left at the bottom after it finishes', answer: 'water does not drain; clean the filter' },
  { question: 'the screen says E4, what does that mean', answer: 'the leak protection has triggered' },
  { question: 'my plates are still wet at the end', answer: 'If dishes come out wet, use rinse aid' },
  { question: 'why do my glasses look milky', answer: 'If glasses look cloudy, lower the rinse aid dose' },
  { question: 'it will not turn on', answer: 'check that the door is closed properly and that the child lock is off' },
  { question: 'how long is the guarantee', answer: 'guaranteed for two years from the date of purchase' },
  { question: 'can I still get spare parts in a few years', answer: 'parts available for ten years' },
  { question: 'is limescale damage covered', answer: 'Damage from limescale, wrong installation or commercial use' },
  { question: 'what number do I ring to get it fixed', answer: 'call 0800 555 0145' },
  { question: 'where do I find the serial number', answer: 'from the label on the edge of the door' },
  { question: 'how do I get rid of my old dishwasher', answer: 'take it to a recycling point for electrical goods' },
  { question: 'can I just put it in the bin', answer: 'Do not throw the appliance away with household waste' },
  { question: 'is it okay to lean on the door when it is down', answer: 'Never sit or stand on the open door' },
  { question: 'how much salt goes in the first time', answer: 'one kilogram of dishwasher salt' },
  { question: 'does the quick programme dry everything', answer: 'does not dry them' },
  { question: 'which programme is safe for wine glasses', answer: 'Glass 45 degrees is gentle on delicate glassware' },
  { question: 'how should the knives go in', answer: 'Knives with long blades lie flat in the cutlery tray' },
  { question: 'how do I stop my kids pressing the buttons', answer: 'hold the Start button for three seconds to lock' },
  // A residents' handbook, long enough to be many pages, read from a PDF (bench/search-corpus/tenant-handbook.txt).
  { question: 'when is the office open', answer: 'open Monday to Friday from 8:30 to 17:00' },
  { question: 'who do I call at night if something goes wrong', answer: 'call the emergency line on 020 7946 0999' },
  { question: 'when do I have to pay the rent', answer: 'Rent is due on the first day of each month' },
  {
    question: 'what happens if I pay late',
    answer: 'we charge interest at 3 percent above the Bank of England base rate',
  },
  { question: 'I cannot afford this month', answer: 'we can agree a repayment plan' },
  { question: 'how big is the deposit', answer: 'Your deposit equals five weeks of rent' },
  { question: 'when do I get my deposit back', answer: 'within 10 days of agreeing the amount' },
  {
    question: 'what if I disagree with what they kept from my deposit',
    answer: 'the scheme offers a free dispute service',
  },
  {
    question: 'what am I paying the monthly service charge for',
    answer: 'cleaning the shared areas, the gardens, the lifts',
  },
  { question: 'I lost my fob, how much is a new one', answer: 'A replacement fob costs 25 pounds' },
  { question: 'I am locked out, what do I do', answer: 'the concierge can let you in after checking your identity' },
  { question: 'how much is a locksmith at night', answer: 'the emergency locksmith call-out costs 90 pounds' },
  { question: 'will someone take in my parcels', answer: 'accepts parcels on your behalf between 7:00 and 22:00' },
  {
    question: 'can the concierge hold my frozen food shopping',
    answer: 'parcels that need refrigeration cannot be accepted',
  },
  {
    question: 'I am getting a new sofa brought in, do I need to tell anyone',
    answer: 'must be booked with the concierge 48 hours in advance',
  },
  {
    question: 'where can my friends leave their car when they visit',
    answer: 'Visitors may park in the five bays by the entrance',
  },
  { question: 'someone keeps using my parking space', answer: "in another resident's space are clamped" },
  { question: 'can I charge my electric car', answer: 'Electric car chargers are available in bays 40 to 48' },
  { question: 'where do I keep my bike', answer: 'Bicycles are stored in the cycle room beside block B' },
  { question: 'can I leave my bike on the balcony', answer: 'Do not keep bicycles in corridors or on balconies' },
  { question: 'where are the bins', answer: 'The bin store is behind block C' },
  { question: 'where do empty wine bottles go', answer: 'Glass goes in the green bank at the car park exit' },
  { question: 'how do I get rid of an old mattress', answer: 'collected on the last Friday of the month' },
  { question: 'when does the heating come on', answer: 'switched on from 1 October to 30 April' },
  { question: 'how is my heating bill worked out', answer: 'you pay for the heat you use' },
  { question: 'my radiator is cold', answer: 'bleed it with the key left in your kitchen drawer' },
  { question: 'how fast will you fix a burst pipe', answer: 'are attended within four hours' },
  { question: 'how long will a dripping tap take to fix', answer: 'are done within three working days' },
  { question: 'do you have to warn me before coming into my flat', answer: "we give at least 24 hours' notice" },
  { question: 'I can smell gas', answer: 'turn off the gas at the meter' },
  { question: 'how often do you check the cooker', answer: 'checks the gas appliances in every flat once a year' },
  { question: 'how do I check the smoke alarm works', answer: 'test them once a month by pressing the test button' },
  { question: 'what do I do if the fire alarm goes off', answer: 'leave the building by the nearest staircase' },
  {
    question: 'should I get out if there is a fire on another floor',
    answer: 'stay put in your flat unless the fire service tells you to leave',
  },
  { question: 'what are the quiet hours', answer: 'keep noise down between 23:00 and 7:00' },
  { question: 'can I drill on a sunday', answer: 'never on Sundays or public holidays' },
  { question: 'my neighbour plays loud music', answer: 'try to talk to them first' },
  { question: 'am I allowed a dog', answer: 'one cat or one small dog with our written permission' },
  { question: 'do I need to ask before getting a goldfish', answer: 'Fish in an aquarium of up to 60 litres' },
  { question: 'can I paint my bedroom', answer: 'You may paint the walls in neutral colours' },
  { question: 'can I put up a satellite dish', answer: 'fit a satellite dish or replace the locks' },
  { question: 'can I have a barbecue outside', answer: 'no barbecues' },
  { question: 'are my things insured', answer: 'It does not cover your own belongings' },
  { question: 'can my mum stay with me for a while', answer: 'guests to stay for up to 14 nights in a row' },
  { question: 'can I put my flat on airbnb', answer: 'let it to holiday visitors through short-term rental websites' },
  { question: 'how much can you put the rent up', answer: 'with a ceiling of 5 percent' },
  { question: 'how much notice do I give to move out', answer: "give us at least two months' notice in writing" },
  { question: 'I need to leave before my contract ends', answer: 'a re-letting fee of 250 pounds' },
  { question: 'what do I have to clean before I leave', answer: 'Clean the flat, the oven and the windows' },
  { question: 'will you keep my letters after I move', answer: 'we do not keep post for former residents' },
  {
    question: 'how do I make a complaint',
    answer: 'If you are not happy with our service, write to the estate office',
  },
  {
    question: 'who can I go to if you do not sort out my complaint',
    answer: 'refer the complaint to the Housing Ombudsman',
  },
  { question: 'how long do you keep my details', answer: 'for six years after it ends' },
  { question: 'can I put out food for the birds', answer: 'Feeding birds from balconies is not allowed' },
  { question: 'can I hang my washing over the balcony', answer: 'no washing drying above the rail' },
  { question: 'can I change the locks', answer: 'You need our written consent before you change the kitchen' },
  { question: 'when will you tell me about renewing', answer: 'three months before your fixed term ends' },
  { question: 'how do I book the check out', answer: 'at least one week before you leave' },
  { question: 'how quickly will you reply to my complaint', answer: 'acknowledge a complaint within 5 working days' },
  { question: 'how long will the concierge hold a parcel', answer: 'keeps them for up to seven days' },
  {
    question: 'what happens to bikes nobody uses',
    answer: 'Abandoned bicycles are labelled and removed after 28 days',
  },
  // More of the shop's FAQ, returns policy and price list.
  {
    question: 'do you send things out the same day',
    answer: 'Orders placed before 14:00 on a working day leave our warehouse',
  },
  { question: 'how will I know where my order is', answer: 'gets a tracking number by text message and e-mail' },
  { question: 'do you take american express', answer: 'We accept debit and credit cards' },
  { question: 'what is the smallest gift card I can buy', answer: 'any amount from 10 to 500 euros' },
  {
    question: 'what happens to the leftover money on my gift card',
    answer: 'any unspent balance stays on the voucher',
  },
  { question: 'how long do you keep my receipts', answer: 'invoices are kept for ten years' },
  { question: 'when can I book the fitter', answer: 'booked at checkout or by phone up to two days before delivery' },
  { question: 'is your cot safe', answer: 'meets the European safety standard EN 716 or EN 747' },
  { question: 'are you open on bank holidays', answer: 'On public holidays every shop is closed' },
  { question: 'how do I let you know I am sending it back', answer: 'Tell us by the online form or by letter' },
  { question: 'do I need the original box', answer: 'in their original packaging' },
  { question: 'do I get the delivery cost back', answer: 'We pay back the price and the standard delivery charge' },
  { question: 'will I get cash back or on my card', answer: 'by the payment method you used' },
  { question: 'can I pick a repair or a replacement', answer: 'at your choice where the law allows' },
  { question: 'do I need to send a photo of the damage', answer: 'within 48 hours with a photograph' },
  { question: 'can I still cancel once it has shipped', answer: 'Once dispatched, refuse the delivery' },
  { question: 'who pays to send back a faulty item', answer: 'Returns of faulty goods are collected at our cost' },
  {
    question: 'how much to have a big sofa picked up for a return',
    answer: '25 euros for a collection of a large item',
  },
  { question: 'my sofa went pale in the sun', answer: 'fading from sunlight' },
  { question: 'how much to deliver a bed', answer: '39 euros for large items such as sofas, beds and wardrobes' },
  { question: 'what does it cost to ship to the islands', answer: 'Deliveries to the islands cost 19 euros per order' },
  { question: 'how much to put shelves up on the wall', answer: 'Wall fixing of shelves and cabinets costs 15 euros' },
  { question: 'how much is it to get rid of my old sofa', answer: '30 euros per item when we deliver the new one' },
  { question: 'when do I have to buy the extra warranty', answer: 'bought within 30 days of delivery' },
  { question: 'how much is a designer if I do not buy anything', answer: 'costs 60 euros otherwise' },
  { question: 'what if you keep my order longer than a month', answer: 'storage costs 5 euros per week' },
  { question: 'when do these prices start', answer: 'valid from 1 January' },
  // The MIT licence, as the PostgreSQL client ships it, and the Apache License 2.0.
  { question: 'can I sell copies of the library', answer: 'sublicense, and/or sell copies of the Software' },
  { question: 'do I have to pay to use this library', answer: 'free of charge, to any person obtaining a copy' },
  {
    question: 'what do I have to keep when I ship it in my product',
    answer: 'The above copyright notice and this permission notice shall be included',
  },
  {
    question: 'if the library loses my data can I claim money',
    answer: 'BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY',
  },
  {
    question: 'can I put my own terms on my changes',
    answer: 'may provide additional or different license terms and conditions',
  },
];

/**
 * Over three documents added after the rest (2026-11-27), written before the search was tuned on them: the Mozilla
 * Public License 2.0 as plain text (its warranty and liability sections in boxes of asterisks, its headings underlined
 * with dashes), the GNU GPL 2.0 as a PDF with a running header and a page footer, and a bicycle workshop's web page
 * (navigation, cookie banner and footer around its main text). Every third is held out, as above.
 */
const NEW_DOCUMENTS: Omit<SearchQuestion, 'heldOut'>[] = [
  // bench/search-corpus/mpl-2.0.txt
  {
    question: 'if I ship a compiled binary do I have to give out the source',
    answer: 'such Covered Software must also be made available in Source Code Form',
  },
  {
    question: 'can I bundle it in a bigger program under my own licence',
    answer: 'You may create and distribute a Larger Work under terms of Your choice',
  },
  {
    question: 'where would I have to sue',
    answer:
      'may be brought only in the courts of a jurisdiction where the defendant maintains its principal place of business',
  },
  {
    question: 'if the software makes me lose money can I get compensation',
    answer: 'damages for lost profits, loss of goodwill',
  },
  { question: 'does it come with any guarantee', answer: 'basis, without warranty of any kind' },
  { question: 'who pays for fixing bugs', answer: 'assume the cost of any necessary servicing, repair, or correction' },
  {
    question: 'I broke the rules, how do I get my rights back',
    answer: 'the rights granted under this License from a particular Contributor are reinstated',
  },
  {
    question: 'how long do I have to fix things after being told I am breaking the licence',
    answer: 'You become compliant prior to 30 days after Your receipt of the notice',
  },
  {
    question: 'what happens if I take a contributor to court over patents',
    answer: 'If You initiate litigation against any entity by asserting a patent infringement claim',
  },
  {
    question: 'can I use their logo',
    answer: 'This License does not grant any rights in the trademarks, service marks, or logos',
  },
  {
    question: 'can I charge for support',
    answer: 'You may choose to offer, and to charge a fee for, warranty, support',
  },
  {
    question: 'may I delete the copyright notices',
    answer: 'You may not remove or alter the substance of any license notices',
  },
  { question: 'who is in charge of new versions of the licence', answer: 'Mozilla Foundation is the license steward' },
  {
    question: 'what if a judge says part of the licence is invalid',
    answer: 'such provision shall be reformed only to the extent necessary to make it enforceable',
  },
  {
    question: 'what if a law stops me from following the licence',
    answer: 'describe the limitations and the code they affect',
  },
  {
    question: 'how much can I ask for sending someone the source',
    answer: 'at a charge no more than the cost of distribution to the recipient',
  },
  { question: 'is it free to use worldwide', answer: 'world-wide, royalty-free, non-exclusive license' },
  {
    question: 'what does control of a company mean here',
    answer: 'ownership of more than fifty percent (50%) of the outstanding shares',
  },
  {
    question: 'does the patent grant cover code someone took out',
    answer: 'for any code that a Contributor has removed from Covered Software',
  },
  {
    question: 'what text do I put at the top of my files',
    answer: 'This Source Code Form is subject to the terms of the Mozilla Public License',
  },
  // bench/search-corpus/gpl-2.0.txt, read from a PDF with a running header and footer
  {
    question: 'if I give away the program as an executable how long must my offer of the source last',
    answer: 'valid for at least three years',
  },
  {
    question: 'can I charge money for giving people copies',
    answer: 'You may charge a fee for the physical act of transferring a copy',
  },
  { question: 'can I sell a warranty for it', answer: 'offer warranty protection in exchange for a fee' },
  { question: 'am I allowed to just run it', answer: 'The act of running the Program is not restricted' },
  { question: 'what counts as source code', answer: 'preferred form of the work for making modifications to it' },
  {
    question: 'do I have to mark the files I edited',
    answer: 'prominent notices stating that you changed the files',
  },
  {
    question: 'what if a court ruling means I cannot meet the conditions',
    answer: 'as a consequence of a court judgment or allegation of patent infringement',
  },
  {
    question: 'what happens if I break the licence',
    answer: 'Any attempt otherwise to copy, modify, sublicense or distribute the Program is void',
  },
  {
    question: 'do people who got copies from me lose their rights too',
    answer: 'will not have their licenses terminated',
  },
  { question: 'is there any guarantee it works', answer: 'THERE IS NO WARRANTY FOR THE PROGRAM' },
  {
    question: 'who pays for repairs if it is faulty',
    answer: 'ASSUME THE COST OF ALL NECESSARY SERVICING, REPAIR OR CORRECTION',
  },
  {
    question: 'can I add my own conditions for the people I give it to',
    answer: 'You may not impose any further restrictions on the recipients',
  },
  {
    question: 'can I put it inside a closed source commercial product',
    answer: 'does not permit incorporating your program into proprietary programs',
  },
  {
    question: 'what if patents make it illegal in some countries',
    answer: 'geographical distribution limitation excluding those countries',
  },
  { question: 'can I ask the authors for an exception', answer: 'write to the author to ask for permission' },
  { question: 'will there be new versions of the licence', answer: 'may publish revised and/or new versions' },
  {
    question: 'does another program on the same disk have to be under it too',
    answer: 'mere aggregation of another work not based on the Program',
  },
  { question: 'what should my program print when it starts in interactive mode', answer: 'Gnomovision version 69' },
  { question: 'does my employer have to sign anything', answer: 'copyright disclaimer' },
  {
    question: 'what must I do when I hand out exact copies',
    answer: 'conspicuously and appropriately publish on each copy an appropriate copyright notice',
  },
  // bench/search-corpus/bike-workshop.html, read as the crawler reads a page
  { question: 'how much is a basic check of my bicycle', answer: 'The Safety Check costs £35' },
  { question: 'do you work on e-bikes', answer: 'Electric bikes pay a £20 supplement on any package' },
  {
    question: 'how long does it take to mend a flat tyre',
    answer: 'We fix a puncture while you wait, usually within twenty minutes',
  },
  { question: 'what does the most thorough service include', answer: 'the bike is stripped to the frame' },
  { question: 'are parts included in the price of the standard service', answer: 'Parts are charged on top' },
  {
    question: 'if I drop my bike off in the morning when can I pick it up',
    answer: 'Bikes booked in before 10am on a weekday are ready the next working day',
  },
  { question: 'what happens if I forget to pick up my bike', answer: 'charged a storage fee of £2 a day' },
  {
    question: 'will you ring me if it costs more than you said',
    answer: 'we call you for approval before we go ahead',
  },
  { question: 'are you open on sunday', answer: 'closed on Sundays, Mondays and bank holidays' },
  { question: 'can I come after work', answer: 'The late evening on Thursday runs until 7pm for commuters' },
  { question: 'what if the problem comes back after you fixed it', answer: 'we put it right free of charge' },
  { question: 'is damage from an accident covered', answer: 'Wear and tear and crash damage are not covered' },
  { question: 'can you pick my bike up from my house', answer: 'we collect your bike from home or work' },
  { question: 'can I pay with my phone', answer: 'Apple Pay' },
  {
    question: 'can I use my cycle to work voucher for a service',
    answer: 'accepted for parts and accessories but not for servicing',
  },
  { question: 'can I borrow a bike while mine is being fixed', answer: 'we lend you a hybrid bike at no charge' },
  { question: 'what do you do about tubeless tyres', answer: 'resealed with fresh sealant for £18' },
  { question: 'where is the workshop', answer: 'Our workshop on Mill Lane' },
  { question: 'can you straighten a buckled wheel', answer: 'truing both wheels' },
  {
    question: 'do you put in new gear cables in the big service',
    answer: 'new cables and outer casings are fitted as standard',
  },
];

export const PARAPHRASED_QUESTIONS: SearchQuestion[] = [
  ...PARAPHRASED.map((question, index) => ({ ...question, heldOut: index % 3 === 2 })),
  ...NEW_DOCUMENTS.map((question, index) => ({ ...question, heldOut: index % 3 === 2, newDocument: true })),
];
