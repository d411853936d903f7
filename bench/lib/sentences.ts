/**
 * Fixed sentences the benches synthesise and then transcribe, written before any run. The realtime bench's choice of how
 * much audio to decode before the speech was made on `roundTripKokoro` (with the eval recordings), not on `otherVoiceKokoro`.
 */

/** Three sentences in each language Kokoro speaks, keyed by the synthesis language; no digits (a transcript writes numerals). */
export const roundTripKokoro: Record<string, string[]> = {
  'en-us': [
    'The library opens early in the morning and closes late on Fridays.',
    'Please remember to bring your umbrella, because it may rain this afternoon.',
    'She finished the report before lunch and sent it to the whole team.',
  ],
  'en-gb': [
    'The train to London was delayed again this morning.',
    'We had a lovely walk along the river before dinner.',
    'My brother is studying history at a university in the north.',
  ],
  es: [
    'Mañana por la mañana vamos a visitar a mis abuelos en el pueblo.',
    'El restaurante de la esquina tiene la mejor paella de la ciudad.',
    'Mi hermana trabaja en un hospital cerca del centro.',
  ],
  fr: [
    'Nous avons passé une excellente soirée chez nos amis au bord du lac.',
    'Le musée est fermé le lundi, mais ouvert tous les autres jours.',
    'Ma sœur apprend à jouer du piano depuis longtemps.',
  ],
  it: [
    'Domani andiamo al mercato per comprare frutta fresca e verdura.',
    'Il treno per Roma parte questa sera.',
    'Mia madre prepara una torta buonissima ogni domenica.',
  ],
  'pt-br': [
    'Amanhã vamos visitar os nossos avós que moram no interior.',
    'O restaurante perto da praia serve um peixe delicioso.',
    'Meu irmão estuda engenharia na universidade federal.',
  ],
  hi: ['मैं हर सुबह पार्क में टहलने जाता हूँ।', 'आज मौसम बहुत अच्छा है।', 'मेरी बहन दिल्ली में डॉक्टर है।'],
  ja: ['今日はとても良い天気ですね。', '駅の近くに新しいレストランができました。', '私は毎朝コーヒーを飲みます。'],
  zh: ['今天天气很好，我们去公园散步吧。', '我的朋友在北京大学学习历史。', '这家饭店的菜非常好吃。'],
};

/**
 * Three other sentences per language, each language in a second voice (French has only one), for the realtime bench. They
 * were written before that bench's choice of how much audio to decode before the speech, and held out from it.
 */
export const otherVoiceKokoro: Record<string, { voice: string; sentences: string[] }> = {
  'en-us': {
    voice: 'am_michael',
    sentences: [
      'The children played in the garden until the sun went down.',
      'Could you tell me where the nearest pharmacy is, please?',
      'He bought a new bicycle and rode it to work every day.',
    ],
  },
  'en-gb': {
    voice: 'bm_george',
    sentences: [
      'The shop on the corner sells fresh bread every morning.',
      'I left my keys on the kitchen table last night.',
      'Our neighbours are planning a party for the weekend.',
    ],
  },
  es: {
    voice: 'em_alex',
    sentences: [
      'Los niños juegan en el parque después de la escuela.',
      'Necesito comprar pan y leche antes de volver a casa.',
      'El verano pasado viajamos a la costa con toda la familia.',
    ],
  },
  fr: {
    voice: 'ff_siwis',
    sentences: [
      'Le boulanger ouvre sa boutique très tôt chaque matin.',
      'Nous partirons en vacances à la montagne cet été.',
      'Mon père lit le journal en buvant son café.',
    ],
  },
  it: {
    voice: 'im_nicola',
    sentences: [
      'La biblioteca comunale resta aperta fino a tardi il giovedì.',
      "Ho dimenticato l'ombrello a casa di mia sorella.",
      'I bambini giocano a calcio nel cortile della scuola.',
    ],
  },
  'pt-br': {
    voice: 'pm_alex',
    sentences: [
      'A padaria da esquina vende pão fresco todas as manhãs.',
      'Nós vamos viajar para o litoral nas férias de verão.',
      'Minha avó faz um bolo de chocolate delicioso.',
    ],
  },
  hi: { voice: 'hm_omega', sentences: ['मेरे पिताजी रोज़ सुबह अख़बार पढ़ते हैं।', 'बच्चे स्कूल के बाद मैदान में खेलते हैं।', 'हम छुट्टियों में पहाड़ों पर घूमने जाएंगे।'] },
  ja: { voice: 'jm_kumo', sentences: ['明日は友達と映画を見に行きます。', 'この本はとても面白かったです。', '駅まで歩いて行きましょう。'] },
  zh: { voice: 'zm_yunxi', sentences: ['我每天早上很早起床。', '这本书非常有意思。', '周末我们一起去看电影吧。'] },
};

/** Whisper's language code where the synthesis language differs. */
export const whisperLanguage = (language: string): string =>
  ({ 'en-us': 'en', 'en-gb': 'en', 'pt-br': 'pt', nb: 'no' })[language] ?? language;

/**
 * English sentences whose first word starts with a plosive or is a short function word (issue 32: "Please", "Bring",
 * "Papers" lost or changed their first word on some voices), written before any run of them. Pairs share a first word or
 * sound; the first of each pair is in the tuning half (where any parameter is chosen), the second in the held-out half
 * (where the figures are read). No digits (a transcript writes numerals), no contractions or words with two spellings.
 */
export const firstWordEnglish: string[] = [
  'Please close the door behind you.',
  'Please hold the line while I transfer your call.',
  'Bring a warm coat, because the evenings get cold up here.',
  'Bring the papers to the meeting.',
  'Papers and pens are in the top drawer of my desk.',
  'Papers were scattered all over the kitchen floor.',
  'To be honest, I did not expect so many people tonight.',
  'To find the exit, follow the green signs.',
  'But the shop was already closed when we arrived.',
  'But nobody answered the phone.',
  'Do you know where the station is?',
  'Do you have a pen I could borrow?',
  'Go straight ahead and turn left at the bank.',
  'Go and ask your father.',
  'Put the milk back in the fridge, please.',
  'Put your bags under the seat in front of you.',
  'Get some rest and call me in the morning.',
  'Get ready, the taxi is outside.',
  'By the end of the week, the new bridge should be open to traffic.',
  'By now the kids should be asleep.',
  'Take the second exit at the roundabout.',
  'Tell your sister that dinner is ready.',
  'Keep the receipt in case you need to return it.',
  'Call the office before noon if you can.',
  'Give me a minute to find my glasses.',
  'Good luck with the interview tomorrow.',
  'Did anyone see where I left my umbrella?',
  'Dogs are not allowed inside the museum.',
  'Could you speak a little more slowly?',
  'Can we meet at the library near the park?',
  'Be careful, the floor is still wet.',
  'Books borrowed from the library must be returned within three weeks.',
];
/** The tuning half (even positions) and the held-out half (odd positions) of firstWordEnglish. */
export const firstWordHalves = {
  tuning: firstWordEnglish.filter((_, i) => i % 2 === 0),
  heldOut: firstWordEnglish.filter((_, i) => i % 2 === 1),
};
