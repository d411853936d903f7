import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeSpeakable } from '../../../src/operations/synthesize/speech-stream.js';
import { isSsml, ssmlMarkupIn } from '../../../src/operations/synthesize/text/ssml.js';
import { repeatsPhrase } from '../../../src/operations/transcribe/engines/whisper-cpp.js';

test('text is spoken once a sentence is complete; at the start a long enough clause is enough, and the opening clause whatever its length', () => {
  assert.equal(takeSpeakable('Hello there', { final: false, clauseOk: true }), undefined);
  assert.equal(takeSpeakable('Hello there, how', { final: false, clauseOk: true }), undefined, 'a short clause waits for more');
  assert.deepEqual(
    takeSpeakable('Sure, I can', { final: false, clauseOk: true, opening: true }),
    { piece: 'Sure,', rest: 'I can' },
    'but not at the opening',
  );
  assert.equal(
    takeSpeakable('Sure,', { final: false, clauseOk: true, opening: true }),
    undefined,
    'a clause ends once the next word has started',
  );
  assert.deepEqual(takeSpeakable('Good morning to all of you out there, how', { final: false, clauseOk: true }), {
    piece: 'Good morning to all of you out there,',
    rest: 'how',
  });
  assert.equal(takeSpeakable('Hello there, how', { final: false, clauseOk: false }), undefined);
  assert.deepEqual(takeSpeakable('One. Two! Three', { final: false, clauseOk: false }), { piece: 'One. Two!', rest: 'Three' });
  assert.deepEqual(takeSpeakable('One, two. Three', { final: false, clauseOk: true }), { piece: 'One, two.', rest: 'Three' });
  // A full stop is an end only once the next word has started: "3." may become "3.5".
  assert.equal(takeSpeakable('It costs 3.', { final: false, clauseOk: false }), undefined);
  assert.deepEqual(takeSpeakable('你好。今天', { final: false, clauseOk: false }), { piece: '你好。', rest: '今天' });
  assert.deepEqual(takeSpeakable(' the rest ', { final: true, clauseOk: false }), { piece: 'the rest', rest: '' });
  assert.equal(takeSpeakable(' ... ', { final: true, clauseOk: false }), undefined);
  const long = `${'word, '.repeat(40)}more`;
  assert.equal(takeSpeakable(long, { final: false, clauseOk: false })?.rest, 'more');
});

test('a draft that says a phrase twice in a row is a loop', () => {
  assert.equal(repeatsPhrase('Mr. Quilter. Mr. Quilter. Mr.'), true);
  assert.equal(repeatsPhrase('Mr. Quilter is the apostle of the middle classes.'), false);
  assert.equal(repeatsPhrase('It is very very good.'), false);
});

test('an SSML document on the speech socket is spoken whole once its </speak> has come (issue 39)', () => {
  const opening = { final: false, clauseOk: true, opening: true };
  assert.equal(takeSpeakable('<speak>Hello, there. <break time="1s"/>How', opening), undefined, 'no cut inside the document');
  assert.deepEqual(takeSpeakable('<speak>Hello, there. <break time="1s"/>How</speak> Next', opening), {
    piece: '<speak>Hello, there. <break time="1s"/>How</speak>',
    rest: ' Next',
  });
  // An unfinished document at the end is handed over whole (and answered with its 400).
  assert.deepEqual(takeSpeakable('<speak>Hello', { final: true, clauseOk: false }), { piece: '<speak>Hello', rest: '' });
  // Text before a document is spoken up to where the document starts, never cut at a clause inside it.
  const later = 'Sure thing <speak>Hello, there my good friend of many years. <break time="1s"/>How';
  assert.deepEqual(takeSpeakable(later, { final: false, clauseOk: true }), {
    piece: 'Sure thing',
    rest: '<speak>Hello, there my good friend of many years. <break time="1s"/>How',
  });
  assert.deepEqual(
    takeSpeakable('</speak> <speak>Hi.</speak>', opening),
    { piece: '</speak>', rest: '<speak>Hi.</speak>' },
    'to be refused',
  );
  assert.deepEqual(takeSpeakable(' <?xml version="1.0"?>\n<speak>Hi.</speak > Bye', opening), {
    piece: '<?xml version="1.0"?>\n<speak>Hi.</speak >',
    rest: ' Bye',
  });
});

test('SSML markup outside a document is found (the socket refuses it instead of reading it aloud)', () => {
  assert.deepEqual(ssmlMarkupIn('Wait <break time="1s"/> now.'), { tag: '<break time="1s"/>', offset: 5 });
  assert.deepEqual(ssmlMarkupIn('the end.</speak>'), { tag: '</speak>', offset: 8 });
  assert.deepEqual(ssmlMarkupIn('Say <say-as interpret-as="digits">12</say-as>'), { tag: '<say-as interpret-as="digits">', offset: 4 });
  assert.equal(ssmlMarkupIn('If a < b and <strong> or <br> then'), undefined);
  assert.equal(isSsml('  <speak>Hi</speak>'), true);
  assert.equal(isSsml('Hi <speak>Hi</speak>'), false);
  assert.equal(isSsml('   '), false);
});
