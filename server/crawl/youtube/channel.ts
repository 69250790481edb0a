// Which channel a YouTube crawl's site_url names: https://www.youtube.com/@handle, /channel/<id>,
// /user/<name> (a legacy username) or /c/<name> (a custom URL, looked up as a handle, as Trieve
// does), on youtube.com, www. or m.; a channel tab (`/videos`, `/featured`…) after it is ignored.
// Anything else (a video, a playlist, another site) is not a channel.

export type ChannelRef = { by: 'handle'; handle: string } | { by: 'id'; id: string } | { by: 'username'; username: string };

const HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com']);
/** Handles are 3 to 30 letters, digits, `_`, `-` and `.` (YouTube's rule); any script's letters. */
const HANDLE = /^[\p{L}\p{N}_.-]{3,30}$/u;
/** A channel id: UC and 22 characters of URL-safe base64. */
const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/;
const NAME = /^[\p{L}\p{N}_.-]{1,100}$/u;

/** The channel the URL names, or why it names none. */
export function channelRef(siteUrl: string): ChannelRef | { error: string } {
  let url: URL;
  try {
    url = new URL(siteUrl.trim());
  } catch {
    return { error: 'not a URL' };
  }
  const notChannel = { error: `${url.href} is not a YouTube channel: give https://www.youtube.com/@handle or https://www.youtube.com/channel/<id>` };
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !HOSTS.has(url.hostname.toLowerCase())) return notChannel;
  const [first = '', second = ''] = url.pathname
    .split('/')
    .filter(Boolean)
    .map((part) => safeDecode(part));
  if (first.startsWith('@') && HANDLE.test(first.slice(1))) return { by: 'handle', handle: first };
  if (first === 'channel' && CHANNEL_ID.test(second)) return { by: 'id', id: second };
  if (first === 'user' && NAME.test(second)) return { by: 'username', username: second };
  if (first === 'c' && HANDLE.test(second)) return { by: 'handle', handle: `@${second}` };
  return notChannel;
}

/** The channel's canonical address. */
export function channelUrl(ref: ChannelRef): string {
  if (ref.by === 'handle') return `https://www.youtube.com/${encodeURIComponent(ref.handle).replace('%40', '@')}`;
  if (ref.by === 'id') return `https://www.youtube.com/channel/${ref.id}`;
  return `https://www.youtube.com/user/${encodeURIComponent(ref.username)}`;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
