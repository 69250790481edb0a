// The Message operations that call the dataset's model without a topic (generate_message_completions,
// get_tool_function_params, edit_image, transcribe_audio) against a stand-in OpenAI-compatible
// endpoint: what the endpoint is sent, what the caller gets, and every failure a 400 naming its cause.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOrganization, editImage, generateMessageCompletions, getToolFunctionParams, transcribeAudio } from '../../sdk/src/generated/sdk.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { type LlmStandIn, startLlmStandIn, TINY_PNG_BASE64 } from '../support/llmStandIn.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let standIn: LlmStandIn;
let service: TestService;
let orgId: string;
let dataset: DatasetRow;
/** Serves whatever `served` holds, to images given by URL; records the authorization it gets. */
let imageServer: http.Server;
let served: Buffer = Buffer.alloc(0);
let imageServerAuthorization: (string | undefined)[] = [];
let imagePort: number;

const ds = (id: string) => ({ 'SVC-Dataset': id });
const PNG = Buffer.from(TINY_PNG_BASE64, 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1)]);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(40, 0)]);
const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(40, 0)]);
const tool = {
  name: 'get_filters',
  description: 'Pick the catalog filters that match the request.',
  parameters: [
    { name: 'jackets', parameter_type: 'boolean' as const, description: 'Whether jackets are wanted.' },
    { name: 'max_price', parameter_type: 'number' as const, description: 'The highest price wanted.' },
  ],
};

const post = (path: string, body: unknown, datasetId = dataset.id, on = service) =>
  on.request('POST', `/api/message/${path}`, { headers: { authorization: ADMIN_KEY, ...ds(datasetId) }, body });

beforeAll(async () => {
  standIn = await startLlmStandIn();
  imageServer = http.createServer((req, res) => {
    imageServerAuthorization.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(served);
  });
  // All interfaces: reached as localhost, which the service allows, and as 127.0.0.1, which it refuses.
  await new Promise<void>((resolve) => imageServer.listen(0, resolve));
  imagePort = (imageServer.address() as AddressInfo).port;
  service = await startTestService({
    LLM_BASE_URL: standIn.url,
    LLM_API_KEY: 'instance-llm-key',
    LLM_DEFAULT_MODEL: 'stand-in-model',
    OUTBOUND_ALLOW_PRIVATE: 'localhost',
    // Room for audio over the 25 MB limit, so the service's own limit is what refuses it.
    JSON_BODY_LIMIT: '48mb',
  });
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Tools' }, throwOnError: true })).data.id;
  dataset = await service.newDataset(orgId, 'catalog', { TEMPERATURE: 0.3 });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await standIn?.close();
  await new Promise((resolve) => imageServer?.close(resolve));
});

beforeEach(() => {
  standIn.received.length = 0;
  standIn.next.length = 0;
  standIn.otherwise = { kind: 'answer', text: 'A plain reply.' };
  imageServerAuthorization = [];
});

describe('generate_message_completions', () => {
  it("answers the model's reply as text, having sent it the system and the user message", async () => {
    standIn.otherwise = { kind: 'answer', text: 'Bonjour, le monde.' };
    const { data, response } = await generateMessageCompletions({
      client: service.client(),
      headers: ds(dataset.id),
      body: { system_message: 'Translate to French.', user_message: 'Hello, world.' },
      parseAs: 'text',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(data).toBe('Bonjour, le monde.');
    const [sent] = standIn.received;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.authorization).toBe('Bearer instance-llm-key');
    expect(sent.body.model).toBe('stand-in-model');
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'Translate to French.' },
      { role: 'user', content: 'Hello, world.' },
    ]);
  });

  it('leaves out an empty system message and refuses a missing user message', async () => {
    await post('generate_message_completions', { system_message: '', user_message: 'Hi' });
    expect(standIn.received[0].body.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    const missing = await post('generate_message_completions', { system_message: 'Be brief.' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/user_message/);
    expect(standIn.received).toHaveLength(1);
  });
});

describe('get_tool_function_params', () => {
  it('makes the model call the function, with images before the text, and keeps the declared arguments', async () => {
    standIn.otherwise = { kind: 'toolCall', arguments: '{"jackets": true, "max_price": 120.5, "shirts": true}' };
    const { data, response } = await getToolFunctionParams({
      client: service.client(),
      headers: ds(dataset.id),
      body: {
        tool_function: tool,
        user_message_text: 'A warm jacket under 120 francs',
        image_url: 'https://example.com/a.jpg',
        image_urls: ['https://example.com/b.jpg'],
        model: 'vision-model',
      },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({ parameters: { jackets: true, max_price: 120.5 } });
    const [sent] = standIn.received;
    expect(sent.authorization).toBe('Bearer instance-llm-key');
    expect(sent.body).toMatchObject({ model: 'vision-model', temperature: 0.3 });
    expect(sent.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_filters',
          description: 'Pick the catalog filters that match the request.',
          parameters: {
            type: 'object',
            properties: {
              jackets: { type: 'boolean', description: 'Whether jackets are wanted.' },
              max_price: { type: 'number', description: 'The highest price wanted.' },
            },
            required: ['jackets', 'max_price'],
          },
        },
      },
    ]);
    expect(sent.body.tool_choice).toEqual({ type: 'function', function: { name: 'get_filters' } });
    expect(sent.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          { type: 'image_url', image_url: { url: 'https://example.com/b.jpg' } },
          { type: 'text', text: 'A warm jacket under 120 francs' },
        ],
      },
    ]);
  });

  it('drops arguments of the wrong type, and answers null for arguments that are not an object or no call', async () => {
    const ask = () => post('get_tool_function_params', { tool_function: tool, user_message_text: 'jackets', temperature: 0 });
    standIn.next = [
      { kind: 'toolCall', arguments: '{"jackets": "yes", "max_price": 50}' },
      { kind: 'toolCall', arguments: '{"jackets": tru' },
      { kind: 'toolCall', arguments: '[true, 50]' },
      { kind: 'toolCall', arguments: '{"jackets": true}', name: 'another_function' },
      { kind: 'answer', text: 'I would rather not call anything.' },
    ];
    expect((await ask()).body).toEqual({ parameters: { max_price: 50 } });
    for (let i = 0; i < 4; i++) {
      const reply = await ask();
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ parameters: null });
    }
    expect(standIn.received[0].body.temperature).toBe(0);
  });

  it('transcribes audio_input first and gives the model its text instead of user_message_text', async () => {
    standIn.next = [
      { kind: 'answer', text: 'Show me jackets.' },
      { kind: 'toolCall', arguments: '{"jackets": true, "max_price": 80}' },
    ];
    const reply = await post('get_tool_function_params', { tool_function: tool, user_message_text: 'ignored', audio_input: WAV.toString('base64') });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ parameters: { jackets: true, max_price: 80 } });
    const [transcription, chat] = standIn.received;
    expect(transcription.path).toBe('/v1/audio/transcriptions');
    expect(transcription.body.model).toBe('whisper-1');
    expect(transcription.files.map((f) => [f.field, f.filename])).toEqual([['file', 'audio.wav']]);
    expect(chat.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Show me jackets.' }] }]);
  });

  it('refuses audio in which nothing was heard, without asking the model for the call', async () => {
    standIn.next = [{ kind: 'answer', text: '' }];
    const reply = await post('get_tool_function_params', { tool_function: tool, audio_input: WAV.toString('base64') });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/audio_input: nothing was heard/);
    expect(standIn.received.map((r) => r.path)).toEqual(['/v1/audio/transcriptions']);
  });

  it('refuses a request with nothing to read, or a parameter declared twice, before calling the model', async () => {
    for (const [body, message] of [
      [{ tool_function: tool }, /user_message_text, audio_input, image_url or image_urls/],
      [{ tool_function: tool, user_message_text: '' }, /user_message_text, audio_input/],
      [{ tool_function: { ...tool, parameters: [tool.parameters[0], tool.parameters[0]] }, user_message_text: 'x' }, /jackets is declared twice/],
      [{ tool_function: { ...tool, parameters: [{ ...tool.parameters[0], parameter_type: 'string' }] }, user_message_text: 'x' }, /parameter_type/],
      [{ tool_function: tool, audio_input: 'not base64!' }, /audio_input is not valid base64/],
    ] as const) {
      const reply = await post('get_tool_function_params', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toMatch(message);
    }
    expect(standIn.received).toHaveLength(0);
  });
});

describe('edit_image', () => {
  it('sends the images (base64 and fetched by URL) and the prompt, and answers the images made as data URLs', async () => {
    served = JPEG;
    const made = Buffer.concat([PNG, Buffer.from('more')]).toString('base64');
    standIn.otherwise = { kind: 'images', base64: [made, TINY_PNG_BASE64] };
    const { data, response } = await editImage({
      client: service.client(),
      headers: ds(dataset.id),
      body: {
        input_images: [
          { file_name: 'room.png', image_src: { base64: TINY_PNG_BASE64 } },
          { file_name: 'sofa.jpg', image_src: { url: `http://localhost:${imagePort}/sofa.jpg` } },
        ],
        prompt: 'Put the sofa in the room.',
        n: 2,
        size: '1536x1024',
        quality: 'high',
      },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({ image_urls: [`data:image/png;base64,${made}`, `data:image/png;base64,${TINY_PNG_BASE64}`] });
    const [sent] = standIn.received;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.authorization).toBe('Bearer instance-llm-key');
    expect(sent.body).toMatchObject({ model: 'gpt-image-1', prompt: 'Put the sofa in the room.', n: '2', size: '1536x1024', quality: 'high' });
    expect(sent.files.map((f) => [f.filename, f.mimeType])).toEqual([
      ['room.png', 'image/png'],
      ['sofa.jpg', 'image/jpeg'],
    ]);
    expect(sent.files[0].bytes.equals(PNG)).toBe(true);
    expect(sent.files[1].bytes.equals(JPEG)).toBe(true);
    // The image's URL is the tenant's: it never gets the instance's key.
    expect(imageServerAuthorization).toEqual([undefined]);
  });

  it('asks for one low-quality square image by default', async () => {
    const reply = await post('edit_image', { input_images: [{ file_name: 'a.png', image_src: { base64: TINY_PNG_BASE64 } }], prompt: 'Brighter.' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ image_urls: [`data:image/png;base64,${TINY_PNG_BASE64}`] });
    expect(standIn.received[0].body).toMatchObject({ n: '1', size: '1024x1024', quality: 'low' });
  });

  it('refuses images that are missing, not base64, not PNG, JPEG or WebP, of another mime_type, too large or private', async () => {
    const image = (src: Record<string, string>, file_name = 'x.png') => ({ file_name, image_src: src });
    const edit = (input_images: unknown[], extra: Record<string, unknown> = {}) => post('edit_image', { input_images, prompt: 'Edit.', ...extra });
    served = Buffer.concat([PNG, Buffer.alloc(20 * 1024 * 1024)]);
    for (const [reply, message] of [
      [await edit([]), /input_images/],
      [await edit([image({ base64: 'abc$' })]), /input_images\[0\]\.image_src\.base64 is not valid base64/],
      [await edit([image({ base64: '' })]), /input_images\[0\]\.image_src\.base64 is empty/],
      [await edit([image({ base64: TINY_PNG_BASE64 }), image({ base64: GIF.toString('base64') })]), /input_images\[1\] is not a PNG, JPEG or WebP image/],
      [await edit([image({ base64: TINY_PNG_BASE64 })], { mime_type: 'image/jpeg' }), /input_images\[0\] is image\/png, not the mime_type image\/jpeg/],
      [await edit([image({ base64: TINY_PNG_BASE64 })], { mime_type: 'image/gif' }), /mime_type: image\/gif is not supported/],
      [await edit([image({ url: `http://localhost:${imagePort}/huge.png` })]), /over the limit of 20971520 bytes together/],
      [await edit([image({ url: `http://127.0.0.1:${imagePort}/a.png` })]), /input_images\[0\]\.image_src\.url: .*127\.0\.0\.1 is a loopback address/],
      [await edit([image({ base64: TINY_PNG_BASE64 })], { quality: 'ultra' }), /quality/],
    ] as const) {
      expect(reply.status, JSON.stringify(reply.body)).toBe(400);
      expect(reply.body.message).toMatch(message);
    }
    expect(standIn.received).toHaveLength(0);
  });

  it('takes any of the three types with application/octet-stream', async () => {
    const reply = await post('edit_image', {
      input_images: [{ file_name: 'a.jpg', image_src: { base64: JPEG.toString('base64') } }],
      prompt: 'Edit.',
      mime_type: 'application/octet-stream',
    });
    expect(reply.status).toBe(200);
    expect(standIn.received[0].files[0].mimeType).toBe('image/jpeg');
  });
});

describe('transcribe_audio', () => {
  it('answers the text heard, having sent the audio under a name that tells its format', async () => {
    standIn.otherwise = { kind: 'answer', text: 'Where does the glacier end?' };
    const { data, response } = await transcribeAudio({
      client: service.client(),
      headers: ds(dataset.id),
      body: { base64_audio: MP3.toString('base64') },
      parseAs: 'text',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(data).toBe('Where does the glacier end?');
    const [sent] = standIn.received;
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.authorization).toBe('Bearer instance-llm-key');
    expect(sent.body.model).toBe('whisper-1');
    expect(sent.files).toHaveLength(1);
    expect(sent.files[0].filename).toBe('audio.mp3');
    expect(sent.files[0].bytes.equals(MP3)).toBe(true);
  });

  it('refuses bad base64, empty audio, an unknown format and audio over 25 MB', async () => {
    const oversize = Buffer.concat([WAV, Buffer.alloc(25 * 1024 * 1024)]).toString('base64');
    for (const [base64_audio, message] of [
      ['%%%', /base64_audio is not valid base64/],
      ['', /base64_audio is empty/],
      [GIF.toString('base64'), /base64_audio is not audio of a known format/],
      [oversize, /base64_audio is over the limit of 26214400 bytes/],
    ] as const) {
      const reply = await post('transcribe_audio', { base64_audio });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(message);
    }
    expect(standIn.received).toHaveLength(0);
  });
});

describe('failures of the endpoint and its configuration', () => {
  const calls: [string, unknown][] = [
    ['generate_message_completions', { system_message: 'Be brief.', user_message: 'Hi' }],
    ['get_tool_function_params', { tool_function: tool, user_message_text: 'jackets' }],
    ['edit_image', { input_images: [{ file_name: 'a.png', image_src: { base64: TINY_PNG_BASE64 } }], prompt: 'Edit.' }],
    ['transcribe_audio', { base64_audio: WAV.toString('base64') }],
  ];

  it('is a 400 naming the endpoint and its status when the model fails', async () => {
    standIn.otherwise = { kind: 'status', status: 500 };
    for (const [path, body] of calls) {
      const reply = await post(path, body);
      expect(reply.status, path).toBe(400);
      expect(reply.body.message).toBe(`the LLM endpoint ${standIn.url} answered with status 500`);
    }
    standIn.otherwise = { kind: 'garbage' };
    for (const [path, body] of calls) expect((await post(path, body)).status, path).toBe(400);
  }, 60_000);

  it("sends a dataset's own endpoint no instance key", async () => {
    // The stand-in by another name: the same server, but not under the instance's LLM_BASE_URL.
    const tenantUrl = standIn.url.replace('127.0.0.1', 'localhost');
    const tenant = await service.newDataset(orgId, 'own endpoint', { LLM_BASE_URL: tenantUrl });
    standIn.next = [
      { kind: 'answer', text: 'Hi' },
      { kind: 'toolCall', arguments: '{}' },
      { kind: 'images', base64: [TINY_PNG_BASE64] },
      { kind: 'answer', text: 'Hi' },
    ];
    for (const [path, body] of calls) expect((await post(path, body, tenant.id)).status, path).toBe(200);
    expect(standIn.received).toHaveLength(4);
    expect(standIn.received.map((r) => r.authorization)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('names the setting when neither the dataset nor the instance configures an endpoint', async () => {
    const bare = await startTestService();
    try {
      const org = (await createOrganization({ client: bare.client(), body: { name: 'No LLM' }, throwOnError: true })).data.id;
      const plain = await bare.newDataset(org, 'plain');
      for (const [path, body] of calls) {
        const reply = await post(path, body, plain.id, bare);
        expect(reply.status, path).toBe(400);
        expect(reply.body.message).toMatch(/no LLM endpoint is configured: set LLM_BASE_URL/);
      }
      expect(standIn.received).toHaveLength(0);
    } finally {
      await bare.stop();
    }
  }, 30_000);
});
