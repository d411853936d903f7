/** Fixed sentences the benches synthesise and then transcribe (chosen before any run; nothing is tuned on them). */

/** Three sentences in each language Kokoro speaks, keyed by the synthesis language; no digits (a transcript writes numerals). */
export const roundTripKokoro: Record<string, string[]> = {
  'en-us': ['The library opens early in the morning and closes late on Fridays.', 'Please remember to bring your umbrella, because it may rain this afternoon.', 'She finished the report before lunch and sent it to the whole team.'],
  'en-gb': ['The train to London was delayed again this morning.', 'We had a lovely walk along the river before dinner.', 'My brother is studying history at a university in the north.'],
  es: ['Mañana por la mañana vamos a visitar a mis abuelos en el pueblo.', 'El restaurante de la esquina tiene la mejor paella de la ciudad.', 'Mi hermana trabaja en un hospital cerca del centro.'],
  fr: ['Nous avons passé une excellente soirée chez nos amis au bord du lac.', 'Le musée est fermé le lundi, mais ouvert tous les autres jours.', 'Ma sœur apprend à jouer du piano depuis longtemps.'],
  it: ['Domani andiamo al mercato per comprare frutta fresca e verdura.', 'Il treno per Roma parte questa sera.', 'Mia madre prepara una torta buonissima ogni domenica.'],
  'pt-br': ['Amanhã vamos visitar os nossos avós que moram no interior.', 'O restaurante perto da praia serve um peixe delicioso.', 'Meu irmão estuda engenharia na universidade federal.'],
  hi: ['मैं हर सुबह पार्क में टहलने जाता हूँ।', 'आज मौसम बहुत अच्छा है।', 'मेरी बहन दिल्ली में डॉक्टर है।'],
  ja: ['今日はとても良い天気ですね。', '駅の近くに新しいレストランができました。', '私は毎朝コーヒーを飲みます。'],
  zh: ['今天天气很好，我们去公园散步吧。', '我的朋友在北京大学学习历史。', '这家饭店的菜非常好吃。'],
};

/** Whisper's language code where the synthesis language differs. */
export const whisperLanguage = (language: string): string => ({ 'en-us': 'en', 'en-gb': 'en', 'pt-br': 'pt', nb: 'no' })[language] ?? language;
